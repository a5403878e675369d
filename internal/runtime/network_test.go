package runtime

import (
	"testing"

	"github.com/paddockhq/paddock/internal/guestapi"
)

func TestNetSetupApply(t *testing.T) {
	shared := map[string]string{"A": "1"}
	gc := guestapi.Config{Env: shared, ExtraFiles: map[string]string{"/etc/x": "x"}, Hosts: "127.0.0.1 localhost\n"}
	NetSetup{ResolvConf: "nameserver 10.0.0.1\n", Hosts: "10.0.0.2 proxy", Env: map[string]string{"HTTPS_PROXY": "http://proxy"},
		Files: map[string]string{"/etc/ca.pem": "ca"}}.Apply(&gc)
	if gc.ResolvConf != "nameserver 10.0.0.1\n" || gc.Env["A"] != "1" || gc.Env["HTTPS_PROXY"] != "http://proxy" ||
		gc.ExtraFiles["/etc/x"] != "x" || gc.ExtraFiles["/etc/ca.pem"] != "ca" || gc.Hosts == "127.0.0.1 localhost\n" {
		t.Fatalf("after Apply: %+v", gc)
	}
	if len(shared) != 1 {
		t.Fatalf("Apply wrote into the caller's map: %v", shared)
	}
	// Nothing to add leaves the maps as they were.
	before := gc.Env
	NetSetup{}.Apply(&gc)
	if len(gc.Env) != len(before) {
		t.Fatalf("an empty setup changed env: %v", gc.Env)
	}
}
