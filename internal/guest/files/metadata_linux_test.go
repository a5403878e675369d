//go:build linux

package files

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// TestMetadata: metadata is extended attributes on the file, user.<ns>.*,
// so what the API sets the file carries (a workload's getfattr sees it),
// and what is set on the file (setfattr) the API reports.
func TestMetadata(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	p := filepath.Join(d, "f.txt")
	kv := map[string]string{"owner": "agent-7", "purpose": "scratch"}
	fi, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: p, Metadata: kv, MetadataNamespace: "e2b"}, strings.NewReader("one"), 3)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(fi.Metadata, kv) {
		t.Fatalf("write answered metadata %v", fi.Metadata)
	}
	// On the file itself, where getfattr looks.
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p, "user.e2b.owner", buf)
	if err != nil || string(buf[:n]) != "agent-7" {
		t.Fatalf("user.e2b.owner on the file: %q %v", buf[:n], err)
	}
	// Set from "inside" (setfattr does this), reported by stat and list.
	if err := unix.Setxattr(p, "user.e2b.set-inside", []byte("yes"), 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.other.x", []byte("1"), 0); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"owner": "agent-7", "purpose": "scratch", "set-inside": "yes"}
	st, err := c.Stat(ctx, guestapi.StatRequest{Path: p, Metadata: "e2b"})
	if err != nil || !maps.Equal(st.Metadata, want) {
		t.Fatalf("stat metadata %v %v", st.Metadata, err)
	}
	if st, _ := c.Stat(ctx, guestapi.StatRequest{Path: p}); st.Metadata != nil {
		t.Fatalf("stat without a namespace reported %v", st.Metadata)
	}
	ls, err := c.List(ctx, guestapi.ListRequest{Path: d, Metadata: "e2b"})
	if err != nil || len(ls.Entries) != 1 || !maps.Equal(ls.Entries[0].Metadata, want) {
		t.Fatalf("list metadata %+v %v", ls.Entries, err)
	}
	// A write without metadata keeps the file's; a write with it replaces
	// its namespace only.
	if _, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: p}, strings.NewReader("two"), 3); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.Stat(ctx, guestapi.StatRequest{Path: p, Metadata: "e2b"}); !maps.Equal(st.Metadata, want) {
		t.Fatalf("after a plain write: %v", st.Metadata)
	}
	fi, err = c.WriteFile(ctx, guestapi.WriteRequest{Path: p, MetadataNamespace: "e2b", Metadata: map[string]string{"v": "2"}}, strings.NewReader("3"), 1)
	if err != nil || !maps.Equal(fi.Metadata, map[string]string{"v": "2"}) {
		t.Fatalf("replacing write: %v %v", fi.Metadata, err)
	}
	if st, _ := c.Stat(ctx, guestapi.StatRequest{Path: p, Metadata: "other"}); st.Metadata["x"] != "1" {
		t.Fatalf("another namespace was not kept: %v", st.Metadata)
	}
	// An edit keeps it too.
	if _, err := c.Edit(ctx, guestapi.EditRequest{Path: p, OldString: "3", NewString: "4"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.Stat(ctx, guestapi.StatRequest{Path: p, Metadata: "e2b"}); st.Metadata["v"] != "2" {
		t.Fatalf("after an edit: %v", st.Metadata)
	}
	// SetMetadata replaces; an empty map clears.
	fi, err = c.SetMetadata(ctx, guestapi.MetadataRequest{Path: p, Namespace: "e2b", Metadata: map[string]string{"a": "b"}})
	if err != nil || !maps.Equal(fi.Metadata, map[string]string{"a": "b"}) {
		t.Fatalf("set: %v %v", fi.Metadata, err)
	}
	if fi, err = c.SetMetadata(ctx, guestapi.MetadataRequest{Path: p, Namespace: "e2b"}); err != nil || fi.Metadata != nil {
		t.Fatalf("clear: %v %v", fi.Metadata, err)
	}
	if _, err := unix.Getxattr(p, "user.e2b.a", buf); err != unix.ENODATA {
		t.Fatalf("a cleared key is still on the file: %v", err)
	}
	// Directories carry metadata; the default namespace is paddock's.
	if _, err := c.SetMetadata(ctx, guestapi.MetadataRequest{Path: d, Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := unix.Getxattr(d, "user.paddock.k", buf); err != nil || string(buf[:n]) != "v" {
		t.Fatalf("directory metadata: %v", err)
	}
}

func TestMetadataBounds(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	p := filepath.Join(d, "f")
	write(t, c, p, "x")
	many := map[string]string{}
	for i := 0; i <= guestapi.MaxMetadataKeys; i++ {
		many[strings.Repeat("k", i+1)] = "v"
	}
	big := map[string]string{}
	for i := 0; i < 8; i++ {
		big[string(rune('a'+i))] = strings.Repeat("v", guestapi.MaxMetadataValueBytes)
	}
	if err := os.Symlink("f", filepath.Join(d, "link")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(d, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  guestapi.MetadataRequest
		code errs.Code
	}{
		{"too many keys", guestapi.MetadataRequest{Path: p, Metadata: many}, errs.CodeTooLarge},
		{"too many bytes", guestapi.MetadataRequest{Path: p, Metadata: big}, errs.CodeTooLarge},
		{"value too long", guestapi.MetadataRequest{Path: p, Metadata: map[string]string{"k": strings.Repeat("v", guestapi.MaxMetadataValueBytes+1)}}, errs.CodeInvalid},
		{"key with a space", guestapi.MetadataRequest{Path: p, Metadata: map[string]string{"a b": "v"}}, errs.CodeInvalid},
		{"key with a newline", guestapi.MetadataRequest{Path: p, Metadata: map[string]string{"a\n": "v"}}, errs.CodeInvalid},
		{"value with NUL", guestapi.MetadataRequest{Path: p, Metadata: map[string]string{"k": "a\x00"}}, errs.CodeInvalid},
		{"bad namespace", guestapi.MetadataRequest{Path: p, Namespace: "E2B", Metadata: map[string]string{"k": "v"}}, errs.CodeInvalid},
		{"namespace reaching trusted.*", guestapi.MetadataRequest{Path: p, Namespace: "../trusted", Metadata: map[string]string{"k": "v"}}, errs.CodeInvalid},
		{"a FIFO", guestapi.MetadataRequest{Path: filepath.Join(d, "fifo"), Metadata: map[string]string{"k": "v"}}, errs.CodeInvalid},
		{"missing", guestapi.MetadataRequest{Path: filepath.Join(d, "nope"), Metadata: map[string]string{"k": "v"}}, errs.CodeNotFound},
	} {
		_, err := c.SetMetadata(ctx, tc.req)
		if errs.CodeOf(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	// Through a symlink: the target gets it.
	if _, err := c.SetMetadata(ctx, guestapi.MetadataRequest{Path: filepath.Join(d, "link"), Metadata: map[string]string{"via": "link"}}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := unix.Getxattr(p, "user.paddock.via", buf); err != nil || string(buf[:n]) != "link" {
		t.Fatalf("the link's target lacks the metadata: %v", err)
	}
	// The bounds hold for a write too, before any byte is written.
	_, err := c.WriteFile(ctx, guestapi.WriteRequest{Path: filepath.Join(d, "new"), Metadata: many}, strings.NewReader("x"), 1)
	wantCode(t, err, errs.CodeTooLarge, "")
	if _, err := os.Stat(filepath.Join(d, "new")); !os.IsNotExist(err) {
		t.Fatal("a write refused for its metadata created the file")
	}
	// Never the kernel's namespaces: a security.* attribute on the old
	// file is not carried to the new one (security.capability would be
	// file capabilities).
	if err := unix.Setxattr(p, "trusted.paddock-test", []byte("t"), 0); err == nil {
		write(t, c, p, "y")
		if _, err := unix.Getxattr(p, "trusted.paddock-test", buf); err != unix.ENODATA {
			t.Fatalf("a trusted.* attribute was copied to the new file: %v", err)
		}
	}
}

// TestMetadataAsUser: the kernel checks the user's permissions on the
// attributes as on the file.
func TestMetadataAsUser(t *testing.T) {
	requireRoot(t)
	c := startFiles(t)
	ctx := context.Background()
	d := t.TempDir()
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, "roots")
	write(t, c, p, "x")
	_, err := c.SetMetadata(ctx, guestapi.MetadataRequest{Path: p, User: "user", Metadata: map[string]string{"k": "v"}})
	wantCode(t, err, errs.CodeForbidden, "")
	// The positive control: root may.
	if _, err := c.SetMetadata(ctx, guestapi.MetadataRequest{Path: p, Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
}
