package sandbox

import (
	"context"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// Line-range reads are done by the guest: only the lines asked for (at
// most their byte budget) cross to the host, whatever the file's size.
type (
	LinesRequest = wire.LinesRequest
	LinesResult  = wire.LinesResult
)

// ReadLines reads a line range of a text file.
func (m *Manager) ReadLines(ctx context.Context, sc Scope, id string, req LinesRequest) (LinesResult, error) {
	if err := sc.Need(rights.Read); err != nil {
		return LinesResult{}, err
	}
	var err error
	if req.Path, err = cleanIn("path", req.Path, req.User); err != nil {
		return LinesResult{}, err
	}
	if req.Start < 0 || req.End < 0 {
		return LinesResult{}, errs.Invalid("start and end count lines from 1")
	}
	if req.End != 0 && req.End < max(req.Start, 1) {
		return LinesResult{}, errs.Invalid("end (%d) is before start (%d)", req.End, max(req.Start, 1))
	}
	if req.MaxBytes < 0 || req.MaxBytes > wire.MaxLinesBytes {
		return LinesResult{}, errs.Invalid("max_bytes must be between 1 and %d", wire.MaxLinesBytes)
	}
	var res LinesResult
	err = m.fileAct(ctx, sc, id, "file.lines", map[string]any{"path": req.Path, "start": req.Start, "end": req.End, "user": req.User},
		func(g *guestapi.Client) (map[string]any, error) {
			gres, err := g.ReadLines(ctx, guestapi.LinesRequest{Path: req.Path, User: req.User, Start: req.Start, End: req.End,
				MaxBytes: req.MaxBytes})
			if err != nil {
				return nil, err
			}
			res = LinesResult{Path: gres.Path, Content: gres.Content, Start: gres.Start, End: gres.End, Total: gres.Total,
				More: gres.More, Truncated: gres.Truncated, Binary: gres.Binary, Size: gres.Size}
			return map[string]any{"lines": res.End - res.Start + 1, "bytes": len(res.Content)}, nil
		})
	return res, err
}
