package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/paddockhq/paddock/client"
)

// fileSize is the payload of the files scenarios.
const fileSize = 16 << 20

// filesRuns is how many transfers each files scenario makes: fewer than
// the latency scenarios, as each moves 16 MiB.
func (r *runner) filesRuns() int { return max(3, r.o.Runs/10) }

// files measures upload and download throughput of one file through the
// REST files API (the writable layer is RAM here, so this is the API's and
// the guest's cost, not a disk's).
func (r *runner) files(ctx context.Context, st *Stack) {
	up, down := r.result(sFilesUp), r.result(sFilesDown)
	if why := r.caps.lacks("/files", "the files API"); why != "" {
		r.set(up.without(StatusUnavailable, why))
		r.set(down.without(StatusUnavailable, why))
		return
	}
	fail := func(why string) {
		r.set(up.without(StatusFailed, why))
		r.set(down.without(StatusFailed, why))
	}
	sb, err := r.create(ctx, st, r.spec())
	if err != nil {
		fail("create: " + err.Error())
		return
	}
	defer func() { _ = r.remove(ctx, st, sb.ID) }()
	payload := make([]byte, fileSize)
	rng := rand.NewChaCha8([32]byte{1}) // incompressible, reproducible
	_, _ = rng.Read(payload)
	const path = "/tmp/paddock-bench.bin"
	put := func(ctx context.Context) error {
		fi, err := st.Client.WriteFile(ctx, sb.ID, client.WriteRequest{Path: path}, bytes.NewReader(payload), int64(len(payload)))
		if err != nil {
			return err
		}
		if fi.Size != int64(len(payload)) {
			return fmt.Errorf("wrote %d bytes, the server reports %d", len(payload), fi.Size)
		}
		return nil
	}
	get := func(ctx context.Context) error {
		f, err := st.Client.OpenFile(ctx, sb.ID, client.ReadFileRequest{Path: path})
		if err != nil {
			return err
		}
		defer f.Body.Close()
		n, err := io.Copy(io.Discard, f.Body)
		if err != nil {
			return err
		}
		if n != int64(len(payload)) {
			return fmt.Errorf("read %d bytes of %d", n, len(payload))
		}
		return nil
	}
	if err := put(ctx); err != nil { // warm-up, and the file download reads
		fail("first upload: " + err.Error())
		return
	}
	n := r.filesRuns()
	for _, sc := range []struct {
		res *Result
		fn  func(context.Context) error
	}{{&up, put}, {&down, get}} {
		r.prog.start(sc.res.Name, n)
		samples, busy, errs, last := r.sequential(ctx, n, sc.fn)
		out := r.summarize(ctx, *sc.res, samples, busy, errs, last)
		if out.Status == StatusOK {
			out.extra("file_mib", fileSize/mib)
			out.extra("mib_per_s", float64(len(samples))*fileSize/mib/Sum(samples).Seconds())
		}
		r.set(out)
	}
}
