package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
)

// Sandbox is one row of the sandboxes table. Spec and Runtime are JSON
// owned by the sandbox manager and the runtime backend.
type Sandbox struct {
	ID        string
	Tenant    string
	State     string
	Template  string
	Spec      []byte
	Runtime   []byte
	CreatedAt time.Time
	ExpiresAt time.Time
	Pooled    bool
	// PausedAt is when a paused sandbox was paused (zero: not paused);
	// Remaining is the life it gets back when it resumes.
	PausedAt  time.Time
	Remaining time.Duration
}

// PutSandbox inserts or replaces a row.
func (s *DB) PutSandbox(ctx context.Context, r Sandbox) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO sandboxes (id, tenant, state, template, spec, runtime, created_at, expires_at, pooled, paused_at, remaining_ns)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET tenant=excluded.tenant, state=excluded.state, template=excluded.template,
		spec=excluded.spec, runtime=excluded.runtime, created_at=excluded.created_at, expires_at=excluded.expires_at,
		pooled=excluded.pooled, paused_at=excluded.paused_at, remaining_ns=excluded.remaining_ns`,
		r.ID, r.Tenant, r.State, r.Template, string(r.Spec), string(r.Runtime), r.CreatedAt.UnixNano(), r.ExpiresAt.UnixNano(), r.Pooled,
		unixNanoOrZero(r.PausedAt), int64(r.Remaining))
	return err
}

// SetSandboxState updates a row's state.
func (s *DB) SetSandboxState(ctx context.Context, id, state string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE sandboxes SET state=? WHERE id=?`, state, id)
	return err
}

// DeleteSandbox removes a row; a missing row is not an error.
func (s *DB) DeleteSandbox(ctx context.Context, id string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM sandboxes WHERE id=?`, id)
	return err
}

// GetSandbox reads one row.
func (s *DB) GetSandbox(ctx context.Context, id string) (Sandbox, error) {
	row := s.db.QueryRowContext(ctx, `SELECT id, tenant, state, template, spec, runtime, created_at, expires_at, pooled, paused_at, remaining_ns FROM sandboxes WHERE id=?`, id)
	r, err := scanSandbox(row)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errs.ErrNotFound
	}
	return r, err
}

// ListSandboxes reads every row.
func (s *DB) ListSandboxes(ctx context.Context) ([]Sandbox, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, tenant, state, template, spec, runtime, created_at, expires_at, pooled, paused_at, remaining_ns FROM sandboxes ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Sandbox
	for rows.Next() {
		r, err := scanSandbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

type scanner interface{ Scan(...any) error }

func scanSandbox(sc scanner) (Sandbox, error) {
	var r Sandbox
	var spec, rt string
	var created, expires, paused, remaining int64
	if err := sc.Scan(&r.ID, &r.Tenant, &r.State, &r.Template, &spec, &rt, &created, &expires, &r.Pooled, &paused, &remaining); err != nil {
		return r, err
	}
	if paused != 0 {
		r.PausedAt = time.Unix(0, paused)
	}
	r.Remaining = time.Duration(remaining)
	r.Spec, r.Runtime = []byte(spec), []byte(rt)
	r.CreatedAt, r.ExpiresAt = time.Unix(0, created), time.Unix(0, expires)
	return r, nil
}

func unixNanoOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
