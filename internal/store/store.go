// Package store persists Paddock's state in SQLite (modernc.org/sqlite, pure
// Go, WAL mode) under the data directory.
//
// Each table's access lives in its own file. Migrations are named and
// applied once each; packages that own tables (keys, audit checkpoints...)
// pass their own to Open, so no package edits another's schema.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is the store.
type DB struct {
	db *sql.DB
}

// Migration is one named schema change; never edit one that has shipped.
type Migration struct {
	Name string
	SQL  string
}

var baseMigrations = []Migration{{"sandboxes-1", `CREATE TABLE sandboxes (
		id         TEXT PRIMARY KEY,
		tenant     TEXT NOT NULL,
		state      TEXT NOT NULL,
		template   TEXT NOT NULL,
		spec       TEXT NOT NULL,
		runtime    TEXT NOT NULL DEFAULT '{}',
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		pooled     INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX sandboxes_tenant ON sandboxes(tenant);`},
	// A paused sandbox: when it was paused, and the life it has left.
	{"sandboxes-2-paused", `ALTER TABLE sandboxes ADD COLUMN paused_at INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sandboxes ADD COLUMN remaining_ns INTEGER NOT NULL DEFAULT 0;`}}

// Open opens (creating if needed) DIR/paddock.db and applies the base
// migrations and more, in order, skipping those already applied.
func Open(dir string, more ...Migration) (*DB, error) {
	path := filepath.Join(dir, "paddock.db")
	// Local information disclosure (issue 14): SQLite would create the
	// database 0644 (and its -wal and -shm files, which take the
	// database's mode, with it); it holds every sandbox's spec, env
	// values included. Made 0600 before SQLite opens it.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	f.Close()
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(ON)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open: %w", err)
	}
	// One writer at a time is SQLite's model; a single connection also keeps
	// pragmas consistent and avoids SQLITE_BUSY storms.
	db.SetMaxOpenConns(1)
	s := &DB{db: db}
	if err := s.migrate(context.Background(), append(append([]Migration{}, baseMigrations...), more...)); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *DB) Close() error { return s.db.Close() }

// SQL exposes the handle to packages that own their own tables.
func (s *DB) SQL() *sql.DB { return s.db }

func (s *DB) migrate(ctx context.Context, ms []Migration) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	for _, m := range ms {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name=?`, m.Name).Scan(&n); err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		if n > 0 {
			continue
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name, applied_at) VALUES (?, strftime('%s','now'))`, m.Name); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
