package main

import "testing"

// The CLI round trips of paddock cp are in testdata/files.txtar (run by
// TestScripts against a real server).

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]endpoint{
		"-":          {stdio: true},
		"sb-x:/a":    {sandbox: "sb-x", path: "/a"},
		"sb-x:":      {sandbox: "sb-x", path: "/workspace"},
		"sb-x:rel/p": {sandbox: "sb-x", path: "rel/p"},
		"./a:b":      {path: "./a:b"},
		"/abs/a:b":   {path: "/abs/a:b"},
		"dir/file":   {path: "dir/file"},
		"plain":      {path: "plain"},
		".hidden:x":  {path: ".hidden:x"},
	} {
		if got := parseEndpoint(in); got != want {
			t.Errorf("parseEndpoint(%q) = %+v, want %+v", in, got, want)
		}
	}
}
