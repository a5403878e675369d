//go:build linux

package guest

import (
	"encoding/json"

	"golang.org/x/sys/unix"
	"net/http"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// semaphore bounds concurrent work of one kind.
type semaphore chan struct{}

func (s semaphore) TryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s semaphore) Release() { <-s }

// statusOf maps an error code to the HTTP status the guest answers with; the
// host decodes the code from the body, the status is for humans with curl.
func statusOf(code errs.Code) int { return errs.HTTPStatus(code) }

func writeError(w http.ResponseWriter, err error) {
	code := errs.CodeOf(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(statusOf(code))
	_ = json.NewEncoder(w).Encode(guestapi.Error{Code: string(code), Message: errs.Public(err)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (a *Agent) handleHealth(w http.ResponseWriter, r *http.Request) {
	h := guestapi.Health{
		Version: guestapi.Version,
		Uptime:  time.Since(a.started).Seconds(),
		Procs:   a.procs.count(),
	}
	// An overlay reports its upper filesystem: the writable layer.
	var st unix.Statfs_t
	if unix.Statfs("/", &st) == nil {
		h.DiskBytes = int64(st.Blocks-st.Bfree) * st.Bsize
		h.DiskInodes = int64(st.Files - st.Ffree)
	}
	writeJSON(w, h)
}
