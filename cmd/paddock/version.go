package main

import (
	"fmt"
	goruntime "runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := map[string]string{"version": version, "go": goruntime.Version(), "os": goruntime.GOOS, "arch": goruntime.GOARCH}
			if asJSON {
				return printJSON(e.stdout, v)
			}
			fmt.Fprintf(e.stdout, "paddock %s (%s, %s/%s)\n", version, v["go"], v["os"], v["arch"])
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
