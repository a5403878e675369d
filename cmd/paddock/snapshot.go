package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// newSnapshotCmd is `paddock snapshot create|ls|rm` (docs/state.md).
func newSnapshotCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "snapshot", Short: "Save sandboxes' files as snapshots, list and delete them"}
	var asJSON, memory bool
	create := &cobra.Command{
		Use:   "create ID NAME",
		Short: "Snapshot a sandbox's files (it is frozen for the copy); start from it with paddock create --snapshot NAME",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := e.client()
			create := c.CreateSnapshot
			if memory {
				create = c.CreateMemorySnapshot
			}
			s, err := create(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, s)
			}
			fmt.Fprintln(e.stdout, s.Name)
			return nil
		},
	}
	create.Flags().BoolVar(&asJSON, "json", false, "print the snapshot as JSON")
	create.Flags().BoolVar(&memory, "memory", false, "also checkpoint its processes and memory (gVisor; a create from it continues them)")
	ls := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List snapshots",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := e.client().Snapshots(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, list)
			}
			rows := make([][]string, 0, len(list))
			for _, s := range list {
				mem := "-"
				if s.Memory {
					mem = mib(s.MemoryBytes)
				}
				rows = append(rows, []string{s.Name, s.Template, s.Source, mib(s.Bytes), strconv.Itoa(s.Files), mem, ago(s.CreatedAt)})
			}
			table(e.stdout, []string{"NAME", "TEMPLATE", "SOURCE", "SIZE", "FILES", "MEMORY", "CREATED"}, rows)
			return nil
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	rm := &cobra.Command{
		Use:     "rm NAME...",
		Aliases: []string{"delete"},
		Short:   "Delete snapshots (sandboxes made from them keep their files)",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.eachArg(args, func(name string) error { return e.client().DeleteSnapshot(cmd.Context(), name) })
		},
	}
	cmd.AddCommand(create, ls, rm)
	return cmd
}

// newForkCmd is `paddock fork ID [--count N]`.
func newForkCmd(e *env) *cobra.Command {
	var count int
	var memory bool
	cmd := &cobra.Command{
		Use:   "fork ID",
		Short: "Make new sandboxes from one capture of a sandbox's files, spec and network policy (prints their ids)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := e.client()
			fork := c.Fork
			if memory {
				fork = c.ForkMemory
			}
			forks, err := fork(cmd.Context(), args[0], count)
			if err != nil {
				return err
			}
			for _, f := range forks {
				fmt.Fprintln(e.stdout, f.ID)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&count, "count", "n", 1, "how many forks (1 to 100)")
	cmd.Flags().BoolVar(&memory, "memory", false, "each fork continues the running processes, memory included (gVisor)")
	return cmd
}

func mib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }
