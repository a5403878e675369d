package main

import (
	"context"
	"fmt"
	goruntime "runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(e *env) *cobra.Command {
	return resultVerb(e, &cobra.Command{Use: "version", Short: "Print the version", Args: cobra.NoArgs}, "print JSON",
		func(context.Context, []string) (map[string]string, error) {
			return map[string]string{"version": version, "go": goruntime.Version(), "os": goruntime.GOOS, "arch": goruntime.GOARCH}, nil
		}, func(v map[string]string) error {
			fmt.Fprintf(e.stdout, "paddock %s (%s, %s/%s)\n", version, v["go"], v["os"], v["arch"])
			return nil
		})
}
