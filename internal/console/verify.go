package console

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"sync"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/errs"
)

// Verifier checks the whole audit chain: every record's hash and link,
// the signed checkpoints and head. problem names the first bad record;
// err is a failure to check at all.
type Verifier interface {
	VerifyAudit(ctx context.Context) (report *audit.Report, problem string, err error)
}

// AuditVerifier verifies the log in dir against pub (as `paddock audit
// verify` does, from the server).
func AuditVerifier(dir string, pub ed25519.PublicKey) Verifier { return dirVerifier{dir, pub} }

type dirVerifier struct {
	dir string
	pub ed25519.PublicKey
}

func (v dirVerifier) VerifyAudit(context.Context) (*audit.Report, string, error) {
	rep, err := audit.Verify(v.dir, v.pub)
	var bad *audit.BadRecord
	if errors.As(err, &bad) {
		return rep, bad.Error(), nil
	}
	return rep, "", err
}

// VerifyResult is the answer of POST /ui/audit/verify.
type VerifyResult struct {
	OK      bool          `json:"ok"`
	Problem string        `json:"problem,omitempty"`
	Report  *audit.Report `json:"report,omitempty"`
}

var verifying sync.Mutex // one verification at a time, server-wide: it reads the whole log

// verify re-checks the chain. Who may do it is the API's decision: the
// session's key must be able to read the audit log (GET /v1/audit), which
// the console asks the API first.
func (c *Console) verify(w http.ResponseWriter, r *http.Request, s *session) {
	if c.o.Verifier == nil {
		writeError(w, errs.New(errs.CodeUnsupported, "this server cannot verify its audit log from the console"))
		return
	}
	up, err := c.upstream(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "/v1/audit?limit=1", nil)
	if err != nil {
		writeError(w, err)
		return
	}
	req.Host, req.RemoteAddr, req.TLS = r.Host, r.RemoteAddr, r.TLS
	req.Header.Set("Authorization", "Bearer "+s.key)
	rec := &recorder{h: http.Header{}}
	up.ServeHTTP(rec, req)
	if rec.status != http.StatusOK && rec.status != 0 {
		if rec.status == http.StatusUnauthorized {
			c.st.endKey(s.p)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.status)
		_, _ = w.Write(rec.buf.Bytes())
		return
	}
	if !verifying.TryLock() {
		writeError(w, errs.New(errs.CodeRateLimited, "a verification is already running; try again in a moment"))
		return
	}
	defer verifying.Unlock()
	rep, problem, err := c.o.Verifier.VerifyAudit(r.Context())
	if err != nil {
		c.log.Error("audit verification failed to run", "err", err)
		writeError(w, errs.Wrap(errs.CodeInternal, err, "the audit log could not be read for verification (see the server log)"))
		return
	}
	writeJSON(w, http.StatusOK, VerifyResult{OK: problem == "", Problem: problem, Report: rep})
}
