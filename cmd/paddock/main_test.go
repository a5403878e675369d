package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/paddockhq/paddock/internal/guest"
	"github.com/paddockhq/paddock/internal/testenv"
)

// TestMain lets the test binary be three programs: the guest agent (when
// the native runtime starts it inside a sandbox), `paddock` (for
// testscript's exec), and the tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 0 && os.Args[0] == "paddock-guest" {
		os.Exit(guest.Main())
	}
	testscript.Main(m, map[string]func(){
		"paddock": func() { os.Exit(run(os.Args[1:])) },
	})
}

// TestScripts runs testdata/*.txtar against a real server (testenv), with
// PADDOCK_URL and PADDOCK_API_KEY set for the scripts.
func TestScripts(t *testing.T) {
	e := testenv.New(t, testenv.Options{})
	testscript.Run(t, testscript.Params{
		Dir: "testdata",
		Setup: func(env *testscript.Env) error {
			env.Setenv("PADDOCK_URL", e.Server.URL)
			env.Setenv("PADDOCK_API_KEY", e.AdminKey)
			return nil
		},
	})
}
