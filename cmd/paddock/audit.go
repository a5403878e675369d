package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/audit"
)

func newAuditCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify, follow and search the tamper-evident audit log",
		Long: `The audit log records every API action, exec, lifecycle event, OOM kill and
limit hit, hash-chained and signed (see docs/audit.md).

  paddock audit verify   check a data directory's log offline (exit 1 names the first bad record)
  paddock audit tail     show the newest records (-f follows)
  paddock audit query    search records
  paddock audit export   write records as JSON lines

tail, query and export ask the server (admin key); verify reads the files.`,
	}
	cmd.AddCommand(newAuditVerifyCmd(e), newAuditTailCmd(e), newAuditQueryCmd(e), newAuditExportCmd(e))
	return cmd
}

func newAuditVerifyCmd(e *env) *cobra.Command {
	var data, pubkey string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify [--data DIR] [--pubkey FILE]",
		Short: "Check the audit log's hashes, chain, signatures and completeness (offline)",
		Long: `Recompute every record's hash and check the chain, the sequence numbers, every
checkpoint's signature and the signed head (a log that ends before it was
truncated). Works offline on a data directory, also while the server runs.

Signatures are checked with DATA/audit/signing.pub unless --pubkey names a
copy kept elsewhere — which is what rules out a replaced key.

Exit status 0: the log is intact (a summary is printed); 1: it is not, and
the first bad record is named by sequence number, file and line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := auditDir(data)
			keyFrom := pubkey
			if keyFrom == "" {
				keyFrom = filepath.Join(dir, audit.PubKeyFile) + " (from the data directory)"
			}
			rep, err := verifyAudit(dir, pubkey)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, rep)
			}
			for _, w := range rep.Warnings {
				fmt.Fprintln(e.stderr, "warning:", w)
			}
			fmt.Fprintf(e.stdout, "ok: %d records (seq %d-%d) in %d segment(s) of %s\n", rep.Records, rep.FirstSeq, rep.LastSeq, rep.Segments, dir)
			fmt.Fprintf(e.stdout, "    %d signed checkpoint(s), the last at seq %d; signed head at seq %d\n", rep.Checkpoints, rep.LastCheckpoint, rep.HeadSeq)
			fmt.Fprintf(e.stdout, "    signer %s, checked with %s\n", rep.Signer, keyFrom)
			if rep.PrunedBefore > 0 {
				fmt.Fprintf(e.stdout, "    records before seq %d were removed by retention (recorded in the log)\n", rep.PrunedBefore)
			}
			if rep.UnsignedTail > 0 {
				fmt.Fprintf(e.stdout, "    %d record(s) after the last signature (written just before a crash, or not yet signed)\n", rep.UnsignedTail)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", defaultDataDir, "the server's data directory (or its audit directory)")
	cmd.Flags().StringVar(&pubkey, "pubkey", "", "public key to check signatures with (PEM, or 32 bytes hex/base64); default DATA/audit/signing.pub")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON")
	return cmd
}

// auditDir accepts a data directory or the audit directory itself.
func auditDir(data string) string {
	if _, err := os.Stat(filepath.Join(data, audit.HeadFile)); err == nil {
		return data
	}
	if _, err := os.Stat(filepath.Join(data, audit.SegmentName(1))); err == nil {
		return data
	}
	return filepath.Join(data, "audit")
}

// verifyAudit is what `paddock audit verify` runs; pubFile, if set, names
// the public key file.
func verifyAudit(dir, pubFile string) (*audit.Report, error) {
	var pub ed25519.PublicKey
	if pubFile != "" {
		k, err := audit.LoadPublicKey(pubFile)
		if err != nil {
			return nil, err
		}
		pub = k
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("no audit log at %s: %w", dir, err)
	}
	return audit.Verify(dir, pub)
}

// auditFilters are the flags tail, query and export share.
type auditFilters struct {
	sandbox, actor, tenant, action, since, until string
}

func (f *auditFilters) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.sandbox, "sandbox", "", "only records about this sandbox id")
	fs.StringVar(&f.actor, "actor", "", "only records of this key id")
	fs.StringVar(&f.tenant, "tenant", "", "only records of this tenant")
	fs.StringVar(&f.action, "action", "", "only this action (exec, http, sandbox.create, ...; `sandbox.*` for a prefix)")
	fs.StringVar(&f.since, "since", "", "records at or after this time (RFC 3339, or a duration ago: 1h)")
	fs.StringVar(&f.until, "until", "", "records before this time (RFC 3339, or a duration ago)")
}

func (f *auditFilters) query() (client.AuditQuery, error) {
	q := client.AuditQuery{Sandbox: f.sandbox, Actor: f.actor, Tenant: f.tenant, Action: f.action}
	var err error
	if q.Since, err = parseWhen(f.since); err != nil {
		return q, fmt.Errorf("--since: %w", err)
	}
	if q.Until, err = parseWhen(f.until); err != nil {
		return q, fmt.Errorf("--until: %w", err)
	}
	return q, nil
}

func parseWhen(s string) (time.Time, error) {
	if t, ok := audit.ParseWhen(s); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want an RFC 3339 time or a duration ago (e.g. 1h)", s)
}

func newAuditTailCmd(e *env) *cobra.Command {
	var f auditFilters
	var n int
	var follow, asJSON bool
	cmd := &cobra.Command{
		Use:   "tail [-n N] [-f] [--json] [filters]",
		Short: "Show the newest audit records; -f follows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := f.query()
			if err != nil {
				return err
			}
			q.Tail = n
			c := e.client()
			ctx := cmd.Context()
			page, err := c.Audit(ctx, q)
			if err != nil {
				return err
			}
			out := newRecordPrinter(e.stdout, asJSON)
			out.print(page.Records)
			if !follow {
				return out.flush()
			}
			q.Tail, q.Cursor, q.Wait = 0, page.Next, 25*time.Second
			for {
				if err := out.flush(); err != nil {
					return err
				}
				page, err := c.Audit(ctx, q)
				if ctx.Err() != nil {
					return nil // interrupted
				}
				if err != nil {
					return err
				}
				out.print(page.Records)
				q.Cursor = page.Next
			}
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().IntVarP(&n, "lines", "n", 20, "how many records")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new records")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print records as JSON lines (as stored)")
	return cmd
}

func newAuditQueryCmd(e *env) *cobra.Command {
	var f auditFilters
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "query [filters] [--limit N] [--json]",
		Short: "Search audit records, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := f.query()
			if err != nil {
				return err
			}
			out := newRecordPrinter(e.stdout, asJSON)
			left := limit
			for {
				q.Limit = min(left, audit.MaxPage)
				if limit <= 0 {
					q.Limit = audit.MaxPage
				}
				page, err := e.client().Audit(cmd.Context(), q)
				if err != nil {
					return err
				}
				out.print(page.Records)
				left -= len(page.Records)
				if !page.More || (limit > 0 && left <= 0) {
					return out.flush()
				}
				q.Cursor = page.Next
			}
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many records (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print records as JSON lines (as stored)")
	return cmd
}

func newAuditExportCmd(e *env) *cobra.Command {
	var f auditFilters
	var outFile string
	cmd := &cobra.Command{
		Use:   "export [filters] [-o FILE]",
		Short: "Write audit records as JSON lines, exactly as stored",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := f.query()
			if err != nil {
				return err
			}
			var w io.Writer = e.stdout
			if outFile != "" {
				fh, err := os.OpenFile(outFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
				if err != nil {
					return err
				}
				defer fh.Close()
				w = fh
			}
			bw := bufio.NewWriter(w)
			if err := e.client().AuditExport(cmd.Context(), q, bw); err != nil {
				return err
			}
			return bw.Flush()
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVarP(&outFile, "output", "o", "", "write to FILE (0600) instead of stdout")
	return cmd
}

// recordPrinter prints records as a table or as their JSON lines.
type recordPrinter struct {
	w      io.Writer
	tw     *tabwriter.Writer
	asJSON bool
	header bool
}

func newRecordPrinter(w io.Writer, asJSON bool) *recordPrinter {
	return &recordPrinter{w: w, tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0), asJSON: asJSON}
}

func (p *recordPrinter) print(recs []json.RawMessage) {
	for _, raw := range recs {
		if p.asJSON {
			p.w.Write(bytes.TrimSpace(raw))
			p.w.Write([]byte{'\n'})
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(raw, &r); err != nil {
			continue
		}
		if !p.header {
			fmt.Fprintln(p.tw, "SEQ\tTIME\tACTION\tPHASE\tACTOR\tSANDBOX\tDETAIL")
			p.header = true
		}
		fmt.Fprintf(p.tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, audit.When(&r).Local().Format("2006-01-02 15:04:05.000"),
			r.Action, r.Phase, dash(r.Actor), dash(r.Sandbox), detail(&r))
	}
}

func (p *recordPrinter) flush() error {
	if p.asJSON {
		return nil
	}
	return p.tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// detail is one line about what a record says.
func detail(r *audit.Record) string {
	var parts []string
	if r.Status != 0 {
		parts = append(parts, fmt.Sprint(r.Status))
	}
	if r.Code != "" {
		parts = append(parts, r.Code)
	}
	if r.Error != "" {
		parts = append(parts, "error: "+r.Error)
	}
	for _, raw := range []json.RawMessage{r.Args, r.Result} {
		if len(raw) > 0 {
			parts = append(parts, string(raw))
		}
	}
	if r.DurationNs > 0 {
		parts = append(parts, time.Duration(r.DurationNs).Round(time.Microsecond).String())
	}
	s := strings.Join(parts, " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return strings.ToValidUTF8(s, "?")
}
