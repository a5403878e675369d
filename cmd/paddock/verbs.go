package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

// The client verbs share a few shapes: call the server once, then print
// the answer as JSON (--json) or as text. The builders below take a
// command that names the verb (Use, Short, Args, ...) and fill in its RunE
// and its --json flag, so a verb says only what it calls and how it prints.

// listVerb fetches a list and prints it as a table under header, or as
// JSON with --json ([] when there is none, never null).
func listVerb[T any](e *env, cmd *cobra.Command, header []string,
	fetch func(ctx context.Context, args []string) ([]T, error), row func(T) []string) *cobra.Command {
	var asJSON bool
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		list, err := fetch(cmd.Context(), args)
		if err != nil {
			return err
		}
		if asJSON {
			if list == nil {
				list = []T{}
			}
			return printJSON(e.stdout, list)
		}
		rows := make([][]string, 0, len(list))
		for _, v := range list {
			rows = append(rows, row(v))
		}
		table(e.stdout, header, rows)
		return nil
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// resultVerb calls the server and prints the answer with text, or as JSON
// with --json (jsonUsage is that flag's help).
func resultVerb[T any](e *env, cmd *cobra.Command, jsonUsage string,
	call func(ctx context.Context, args []string) (T, error), text func(T) error) *cobra.Command {
	var asJSON bool
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := call(cmd.Context(), args)
		return emit(e, asJSON, v, err, text)
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, jsonUsage)
	return cmd
}

// emit prints a call's answer v: as JSON when asJSON, else with text. A
// failed call (err) prints nothing and is the error.
func emit[T any](e *env, asJSON bool, v T, err error, text func(T) error) error {
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e.stdout, v)
	}
	return text(v)
}

// showVerb calls the server and prints the answer as JSON.
func showVerb[T any](e *env, cmd *cobra.Command, call func(ctx context.Context, args []string) (T, error)) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		v, err := call(cmd.Context(), args)
		if err != nil {
			return err
		}
		return printJSON(e.stdout, v)
	}
	return cmd
}

// eachVerb calls the server once per argument (see eachArg).
func eachVerb(e *env, cmd *cobra.Command, call func(ctx context.Context, arg string) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return e.eachArg(args, func(a string) error { return call(cmd.Context(), a) })
	}
	return cmd
}

// println is the text of verbs that print one line (an id or a name).
func (e *env) println(s string) error {
	fmt.Fprintln(e.stdout, s)
	return nil
}
