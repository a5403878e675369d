//go:build linux

package agent

import (
	"net/http"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/guestapi"
)

func (a *Agent) health(*http.Request, *guestapi.Empty) (guestapi.Health, error) {
	h := guestapi.Health{
		Version: guestapi.Version,
		Uptime:  time.Since(a.started).Seconds(),
		Procs:   a.procs.Count(),
	}
	// An overlay reports its upper filesystem: the writable layer.
	var st unix.Statfs_t
	if unix.Statfs("/", &st) == nil {
		h.DiskBytes = int64(st.Blocks-st.Bfree) * st.Bsize
		h.DiskInodes = int64(st.Files - st.Ffree)
	}
	return h, nil
}
