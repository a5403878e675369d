package e2b

import (
	"archive/tar"
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/dockerfile"
	"github.com/paddockhq/paddock/internal/errs"
)

// The translation of E2B's template definition: each value stays one
// argument of its instruction whatever it holds (newlines, quotes, JSON
// brackets, $VARS, a Dockerfile instruction of its own), the parsed
// Dockerfile has exactly the instructions the steps asked for, and what
// has no safe form is refused.
func TestPlanTemplate(t *testing.T) {
	hostile := "echo hi\nRUN touch /pwned \"]\n# \\\n$HOME `id`"
	p, err := planTemplate(tplSpec{FromImage: "127.0.0.1:5000/base:1", StartCmd: "serve", ReadyCmd: "true", Steps: []tplStep{
		{Type: "ENV", Args: []string{"A", `x" B=$HOME \`, "C", "plain"}},
		{Type: "RUN", Args: []string{hostile}},
		{Type: "RUN", Args: []string{"id", "nobody"}},
		{Type: "COPY", Args: []string{"sub/f.txt", "/dst dir/", "1000", "0750"}, FilesHash: strings.Repeat("a", 64)},
		{Type: "WORKDIR", Args: []string{"/w $x"}},
		{Type: "USER", Args: []string{"user"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := dockerfile.Parse(p.Dockerfile)
	if err != nil {
		t.Fatalf("%v\n%s", err, p.Dockerfile)
	}
	if len(f.Stages) != 1 {
		t.Fatalf("stages: %d", len(f.Stages))
	}
	var got []string
	for _, c := range f.Stages[0].Commands {
		got = append(got, strings.ToUpper(strings.SplitN(c.(interface{ Name() string }).Name(), " ", 2)[0]))
	}
	want := "ENV RUN USER RUN USER COPY WORKDIR USER"
	if strings.Join(got, " ") != want {
		t.Fatalf("instructions %q, want %q\n%s", strings.Join(got, " "), want, p.Dockerfile)
	}
	if !bytes.Contains(p.Dockerfile, []byte(`RUN ["/bin/sh","-c","echo hi\nRUN touch /pwned \"]\n# \\\n$HOME `)) {
		t.Errorf("the hostile command is not one JSON argument:\n%s", p.Dockerfile)
	}
	if !bytes.Contains(p.Dockerfile, []byte(`ENV A="x\" B=\$HOME \\" C="plain"`)) {
		t.Errorf("ENV not quoted literally:\n%s", p.Dockerfile)
	}
	if !bytes.Contains(p.Dockerfile, []byte(`COPY --chown=1000 --chmod=0750 ["e2b-copy-4/sub/f.txt","/dst dir/"]`)) {
		t.Errorf("COPY:\n%s", p.Dockerfile)
	}
	if p.Steps[1] != "base" || p.Steps[3] != "2" || p.Steps[5] != "3" || len(p.Copies) != 1 || p.Copies[0].Dir != "e2b-copy-4" {
		t.Errorf("steps %v copies %v", p.Steps, p.Copies)
	}
	if strings.Join(p.StartCmd, " ") != "/bin/sh -c serve" || strings.Join(p.ReadyCmd, " ") != "/bin/sh -c true" {
		t.Errorf("start %q ready %q", p.StartCmd, p.ReadyCmd)
	}

	for name, spec := range map[string]tplSpec{
		"no base":           {},
		"both bases":        {FromImage: "a", FromTemplate: "b"},
		"base with a space": {FromImage: "a b"},
		"base with $":       {FromImage: "$X"},
		"base newline":      {FromImage: "a\nRUN x"},
		"bad template":      {FromTemplate: "Bad Name"},
		"credentials":       {FromImage: "a", FromImageRegistry: []byte(`{"type":"registry"}`)},
		"user newline":      {FromImage: "a", Steps: []tplStep{{Type: "USER", Args: []string{"root\nRUN x"}}}},
		"run user":          {FromImage: "a", Steps: []tplStep{{Type: "RUN", Args: []string{"x", "a b"}}}},
		"env key":           {FromImage: "a", Steps: []tplStep{{Type: "ENV", Args: []string{"A=B", "c"}}}},
		"env newline":       {FromImage: "a", Steps: []tplStep{{Type: "ENV", Args: []string{"A", "x\nRUN y"}}}},
		"env odd":           {FromImage: "a", Steps: []tplStep{{Type: "ENV", Args: []string{"A"}}}},
		"workdir newline":   {FromImage: "a", Steps: []tplStep{{Type: "WORKDIR", Args: []string{"/a\nRUN x"}}}},
		"copy no hash":      {FromImage: "a", Steps: []tplStep{{Type: "COPY", Args: []string{"a", "/b"}}}},
		"copy dotdot":       {FromImage: "a", Steps: []tplStep{{Type: "COPY", Args: []string{"../a", "/b"}, FilesHash: strings.Repeat("a", 64)}}},
		"copy absolute":     {FromImage: "a", Steps: []tplStep{{Type: "COPY", Args: []string{"/etc", "/b"}, FilesHash: strings.Repeat("a", 64)}}},
		"copy mode":         {FromImage: "a", Steps: []tplStep{{Type: "COPY", Args: []string{"a", "/b", "", "rwx"}, FilesHash: strings.Repeat("a", 64)}}},
		"unknown step":      {FromImage: "a", Steps: []tplStep{{Type: "ADD", Args: []string{"a", "b"}}}},
		"too many steps":    {FromImage: "a", Steps: make([]tplStep, maxTplSteps+1)},
	} {
		if _, err := planTemplate(spec); err == nil {
			t.Errorf("%s: accepted", name)
		} else if c := errs.CodeOf(err); c == errs.CodeInternal {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// An uploaded archive is rewritten, never trusted: names are made
// relative and put under the COPY's directory, devices and hard links are
// dropped, owners and special mode bits go, and its files' bytes are
// bounded.
func TestWriteContext(t *testing.T) {
	var up bytes.Buffer
	tw := tar.NewWriter(&up)
	for _, h := range []*tar.Header{
		{Name: "../../etc/cron.d/x", Typeflag: tar.TypeReg, Mode: 0o4755, Size: 3, Uid: 0},
		{Name: "/abs", Typeflag: tar.TypeReg, Mode: 0o644, Size: 3},
		{Name: "dev", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 1},
		{Name: "hard", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"},
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"},
	} {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			_, _ = tw.Write([]byte("abc"))
		}
	}
	_ = tw.Close()
	// Positive control: the archive is hostile — unpacked naively into a
	// context directory, its first entry lands outside it.
	if naive := filepath.Join("/ctx/e2b-copy-1", "../../etc/cron.d/x"); strings.HasPrefix(naive, "/ctx/") {
		t.Fatalf("the control archive does not climb out (%s)", naive)
	}
	plan := tplPlan{Dockerfile: []byte("FROM a\n"), Copies: []tplCopy{{Dir: "e2b-copy-1", Hash: "h"}}}
	open := func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(up.Bytes())), nil }
	var out bytes.Buffer
	if err := writeContext(&out, plan, open, 1<<20); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&out)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name+":"+string(h.Typeflag))
		if h.Mode&^0o777 != 0 || h.Uid != 0 {
			t.Errorf("%s kept mode %o uid %d", h.Name, h.Mode, h.Uid)
		}
	}
	want := "Dockerfile:0 e2b-copy-1/:5 e2b-copy-1/etc/cron.d/x:0 e2b-copy-1/abs:0 e2b-copy-1/link:2"
	if strings.Join(names, " ") != want {
		t.Fatalf("context %q, want %q", strings.Join(names, " "), want)
	}
	// Over the bound: refused as too large.
	if err := writeContext(io.Discard, plan, open, 5); errs.CodeOf(err) != errs.CodeTooLarge {
		t.Fatalf("over the bound: %v", err)
	}
}
