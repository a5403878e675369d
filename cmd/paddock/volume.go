package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/paddockhq/paddock/client"
)

// newVolumeCmd is `paddock volume create|ls|inspect|rm` (docs/state.md).
func newVolumeCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{Use: "volume", Short: "Volumes that outlive sandboxes: create, list, inspect, delete (mount one with paddock create --volume NAME:PATH)"}
	var asJSON bool
	var size string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a volume of --size (default 1G)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var mb int64
			if size != "" {
				var err error
				if mb, err = parseSizeMB(size); err != nil {
					return fmt.Errorf("--size: %w", err)
				}
			}
			v, err := e.client().CreateVolume(cmd.Context(), args[0], mb)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, v)
			}
			fmt.Fprintln(e.stdout, v.Name)
			return nil
		},
	}
	create.Flags().StringVar(&size, "size", "", "its quota, e.g. 512M, 10G (reserved on the server's disk)")
	create.Flags().BoolVar(&asJSON, "json", false, "print the volume as JSON")
	ls := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List volumes",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := e.client().Volumes(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, list)
			}
			rows := make([][]string, 0, len(list))
			for _, v := range list {
				rows = append(rows, []string{v.Name, strconv.FormatInt(v.SizeMB, 10) + " MiB", mib(v.UsedBytes), attachedList(v), ago(v.CreatedAt)})
			}
			table(e.stdout, []string{"NAME", "SIZE", "USED", "MOUNTED BY", "CREATED"}, rows)
			return nil
		},
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	inspect := &cobra.Command{
		Use:   "inspect NAME",
		Short: "Show a volume as JSON: size, bytes used, the sandboxes mounting it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := e.client().Volume(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return printJSON(e.stdout, v)
		},
	}
	rm := &cobra.Command{
		Use:     "rm NAME...",
		Aliases: []string{"delete"},
		Short:   "Delete volumes (refused while a sandbox mounts one)",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.eachArg(args, func(name string) error { return e.client().DeleteVolume(cmd.Context(), name) })
		},
	}
	cmd.AddCommand(create, ls, inspect, rm)
	return cmd
}

func attachedList(v client.Volume) string {
	if len(v.Attached) == 0 {
		return "-"
	}
	parts := make([]string, len(v.Attached))
	for i, a := range v.Attached {
		parts[i] = a.Sandbox + ":" + a.Path
		if a.ReadOnly {
			parts[i] += ":ro"
		}
	}
	return strings.Join(parts, ",")
}

// parseVolumeFlags reads create's --volume NAME:PATH[:ro] flags.
func parseVolumeFlags(flags []string) ([]client.VolumeMount, error) {
	var out []client.VolumeMount
	for _, f := range flags {
		name, rest, ok := strings.Cut(f, ":")
		if !ok || name == "" || rest == "" {
			return nil, fmt.Errorf("--volume %q: want NAME:PATH or NAME:PATH:ro", f)
		}
		v := client.VolumeMount{Name: name, Path: rest}
		if p, mode, ok := strings.Cut(rest, ":"); ok {
			if mode != "ro" && mode != "rw" {
				return nil, fmt.Errorf("--volume %q: the mode after the path is ro or rw", f)
			}
			v.Path, v.ReadOnly = p, mode == "ro"
		}
		out = append(out, v)
	}
	return out, nil
}
