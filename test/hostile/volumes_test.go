//go:build linux

package hostile

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/api"
	"github.com/paddockhq/paddock/internal/testenv"
)

// Another tenant, on every volume route (read from the server's route
// table): the owner's volume answers exactly what a name the intruder's
// tenant never made answers (404, never 403), and nothing the intruder
// sends lands in it. Positive control: the owner's requests reach it.
func TestAPICrossTenantVolumes(t *testing.T) {
	if _, err := exec.LookPath("mkfs.ext4"); err != nil {
		t.Skip("no mkfs.ext4 (e2fsprogs): volumes unavailable")
	}
	e := newEnv(t, testenv.Options{})
	owner := e.tenantKey("owner", client.Quotas{})
	intruder := e.tenantKey("intruder", client.Quotas{})
	var routes []string
	for _, rt := range api.New(api.Options{Manager: e.Manager}).Routes() {
		if _, pattern, _ := strings.Cut(rt, " "); strings.HasPrefix(pattern, "/v1/volumes/{name}") && rt != "DELETE /v1/volumes/{name}" {
			routes = append(routes, rt)
		}
	}
	routes = append(routes, "DELETE /v1/volumes/{name}") // last: the owner's control deletes it
	if len(routes) < 7 {
		t.Fatalf("only %d volume routes: %v", len(routes), routes)
	}
	// {name} is filled with "1" (paramRE): before the owner makes volume
	// "1", what the intruder gets is the answer for a name never issued.
	before := map[string]reply{}
	for _, rt := range routes {
		method, pattern, _ := strings.Cut(rt, " ")
		before[rt] = send(t, e.Server.URL, method, pattern, "", intruder.Key)
	}
	ctx := ctxT(t, time.Minute)
	oc := e.as(owner.Key)
	if _, err := oc.CreateVolume(ctx, "1", 16); err != nil {
		t.Fatal(err)
	}
	if _, err := oc.VolumeWriteFile(ctx, "1", client.WriteRequest{Path: "/walk"}, []byte("owner's")); err != nil {
		t.Fatal(err)
	}
	for _, rt := range routes {
		method, pattern, _ := strings.Cut(rt, " ")
		got := send(t, e.Server.URL, method, pattern, "", intruder.Key)
		if got != before[rt] {
			t.Errorf("%s: another tenant's volume answers %+v, a name never issued %+v", rt, got, before[rt])
		}
		if got.status == 403 {
			t.Errorf("%s: another tenant's volume answers 403 (its existence leaks)", rt)
		}
	}
	if b, err := oc.VolumeReadFile(ctx, "1", "/walk"); err != nil || string(b) != "owner's" {
		t.Fatalf("after the intruder's requests the owner's file reads %q, %v", b, err)
	}
	for _, rt := range routes {
		method, pattern, _ := strings.Cut(rt, " ")
		if ctl := send(t, e.Server.URL, method, pattern, "", owner.Key); ctl == before[rt] {
			t.Errorf("%s: positive control: the owner's request does not reach its volume (%+v)", rt, ctl)
		}
	}
	if vs, err := e.as(intruder.Key).Volumes(ctx); err != nil || len(vs) != 0 {
		t.Fatalf("the intruder lists %+v %v", vs, err)
	}
}
