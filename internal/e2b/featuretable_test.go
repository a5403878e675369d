package e2b_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The unmodified-SDK scripts whose named steps the feature table cites.
var sdkScripts = []string{"sdk.mjs", "code-sdk.mjs"}

var reStep = regexp.MustCompile("(?m)^\\s*await step\\('((?:[^'\\\\]|\\\\.)*)'")

// stepNames are the names of a script's steps (await step('NAME', ...)),
// in order; a name given twice fails the test.
func stepNames(t *testing.T, script string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range reStep.FindAllSubmatch(b, -1) {
		name := strings.ReplaceAll(string(m[1]), `\'`, `'`)
		if seen[name] {
			t.Errorf("%s: step %q is named twice", script, name)
		}
		seen[name] = true
		out = append(out, name)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no steps found", script)
	}
	return out
}

// requireEverySteps fails unless the script's output has "ok NAME" for
// each of its steps: a step the feature table cites ran and passed.
func requireEveryStep(t *testing.T, script string, out []byte) {
	t.Helper()
	ok := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, found := strings.CutPrefix(sc.Text(), "ok "); found {
			ok[v] = true
			if i := strings.LastIndex(v, " ("); i > 0 && strings.HasSuffix(v, " ms)") {
				ok[v[:i]] = true // code-sdk.mjs adds the step's time
			}
		}
	}
	for _, name := range stepNames(t, script) {
		if !ok[name] {
			t.Errorf("%s: step %q did not pass", script, name)
		}
	}
}

// featureRow is one row of docs/e2b.md's feature table.
type featureRow struct {
	line   int
	status string
	checks []string
}

var reTick = regexp.MustCompile("`([^`]+)`")

// featureTable parses the table under "## Feature table" in docs/e2b.md:
// | E2B feature | Paddock | how, or why | checks |, the status bold
// (**works**, **differs**, **refused**), the checks the steps' names in
// backticks.
func featureTable(t *testing.T) []featureRow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "e2b.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []featureRow
	in := false
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == "## Feature table"
			continue
		case !in || !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "|---") || strings.HasPrefix(l, "| E2B feature"):
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
		if len(cells) != 4 {
			t.Errorf("docs/e2b.md:%d: a feature row has %d cells, want 4 (feature, status, how or why, checks)", i+1, len(cells))
			continue
		}
		r := featureRow{line: i + 1, status: strings.Trim(strings.TrimSpace(cells[1]), "*")}
		for _, m := range reTick.FindAllStringSubmatch(cells[3], -1) {
			r.checks = append(r.checks, m[1])
		}
		rows = append(rows, r)
	}
	if len(rows) < 20 {
		t.Fatalf("docs/e2b.md: the feature table has %d rows; is the section \"## Feature table\" there?", len(rows))
	}
	return rows
}

// TestFeatureTable keeps docs/e2b.md's feature table true: every row says
// works, differs or refused; every "works" row names at least one step of
// the unmodified-SDK scripts (which TestSDK and TestCodeInterpreterSDK run,
// each step required to pass); every named check is a step; and every step
// is cited by a row, so a check without a row fails as well.
func TestFeatureTable(t *testing.T) {
	steps := map[string]string{}
	for _, s := range sdkScripts {
		for _, n := range stepNames(t, s) {
			if prev, dup := steps[n]; dup {
				t.Errorf("step %q is in both %s and %s", n, prev, s)
			}
			steps[n] = s
		}
	}
	cited := map[string]bool{}
	counts := map[string]int{}
	for _, r := range featureTable(t) {
		counts[r.status]++
		switch r.status {
		case "works", "differs", "refused":
		default:
			t.Errorf("docs/e2b.md:%d: status %q, want works, differs or refused", r.line, r.status)
		}
		if r.status == "works" && len(r.checks) == 0 {
			t.Errorf("docs/e2b.md:%d: a \"works\" row names no check", r.line)
		}
		for _, c := range r.checks {
			if _, ok := steps[c]; !ok {
				t.Errorf("docs/e2b.md:%d: check %q is no step of %v", r.line, c, sdkScripts)
			}
			cited[c] = true
		}
	}
	var uncited []string
	for n, s := range steps {
		if !cited[n] {
			uncited = append(uncited, s+": "+n)
		}
	}
	sort.Strings(uncited)
	for _, u := range uncited {
		t.Errorf("step %q has no row in docs/e2b.md's feature table", u)
	}
	t.Logf("feature table: %v", counts)
}
