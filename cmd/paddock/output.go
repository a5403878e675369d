package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table prints rows under a header, aligned.
func table(w io.Writer, header []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func ago(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	if d < 0 {
		return "in " + (-d).String()
	}
	return d.String() + " ago"
}

func until(t time.Time) string {
	d := time.Until(t).Round(time.Second)
	if d < 0 {
		return "expired"
	}
	return d.String()
}

func fmtLabels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, ",")
}

// parseKV turns ["k=v",...] into a map.
func parseKV(what string, items []string) (map[string]string, error) {
	if len(items) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(items))
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s %q: want KEY=VALUE", what, it)
		}
		m[k] = v
	}
	return m, nil
}

// eachArg runs fn for each argument, printing the ones done and the
// failures (without stopping at one); any failure exits 1.
func (e *env) eachArg(args []string, fn func(arg string) error) error {
	return e.eachArgSays(args, func(a string) (string, error) { return a, fn(a) })
}

// eachArgSays is eachArg printing, for each argument done, what fn says.
func (e *env) eachArgSays(args []string, fn func(arg string) (string, error)) error {
	var failed int
	for _, a := range args {
		said, err := fn(a)
		if err != nil {
			fmt.Fprintf(e.stderr, "paddock: %s: %v\n", a, err)
			failed++
			continue
		}
		fmt.Fprintln(e.stdout, said)
	}
	if failed > 0 {
		return exitError{1}
	}
	return nil
}
