package main

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/paddockhq/paddock/internal/audit"
	"github.com/paddockhq/paddock/internal/server"
)

// obsFlags are serve's audit and observability options.
type obsFlags struct {
	sync               string
	syncInterval       time.Duration
	failOpen           bool
	webhook            string
	segmentSize        string
	maxSegments        int
	checkpointEvery    int
	checkpointInterval time.Duration
	maxBytes           string
	maxAge             time.Duration
	archiveDir         string
	minFree            string
	metricsListen      string
	otlpEndpoint       string
}

func (o *obsFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&o.sync, "audit-sync", string(audit.SyncInterval), "when audit records are fsync'd: always (every record before its action goes on), batch (intents before their action, results within --audit-sync-interval), interval (every --audit-sync-interval). Every mode writes a record to the file before its action: a crash of the server loses none; the modes differ on power loss (docs/audit.md)")
	fs.DurationVar(&o.syncInterval, "audit-sync-interval", 10*time.Millisecond, "longest a written audit record waits for fsync (batch, interval)")
	fs.BoolVar(&o.failOpen, "audit-fail-open", false, "let actions proceed when the audit log cannot be written (logged, and the gap recorded); default: refuse them (503)")
	fs.StringVar(&o.webhook, "audit-webhook", "", "POST policy violations (denials, limit hits, OOM kills, sandbox failures) as JSON to this URL")
	fs.StringVar(&o.segmentSize, "audit-segment-size", "64M", "start a new audit segment file at this size")
	fs.IntVar(&o.maxSegments, "audit-max-segments", 0, "keep at most this many audit segments, deleting the oldest (recorded in the log); 0 keeps all")
	fs.IntVar(&o.checkpointEvery, "audit-checkpoint-every", 1000, "records between signed audit checkpoints")
	fs.DurationVar(&o.checkpointInterval, "audit-checkpoint-interval", time.Minute, "longest time between signed audit checkpoints")
	fs.StringVar(&o.maxBytes, "audit-max-bytes", "", "keep at most this much audit log (e.g. 10G), expiring the oldest sealed segments (recorded in the log; verify still checks what remains); default: keep all")
	fs.DurationVar(&o.maxAge, "audit-max-age", 0, "expire sealed audit segments older than this (e.g. 2160h); 0 keeps them")
	fs.StringVar(&o.archiveDir, "audit-archive-dir", "", "move expired audit segments to this directory instead of deleting them")
	fs.StringVar(&o.minFree, "audit-min-free", "", "warn (log and metric paddock_audit_disk_low) when the audit volume has less free space than this (default: 4 segments, at least 256M); the log fails closed only when the disk is full")
	fs.StringVar(&o.metricsListen, "metrics-listen", "", "also serve /metrics without a key on this loopback address (e.g. 127.0.0.1:9464); the API's /metrics needs the admin key")
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "send OpenTelemetry traces over OTLP/HTTP to this host:port or URL (needs a build with the paddock_otel tag)")
}

// config is the server's audit and metrics configuration.
func (o *obsFlags) config(f *serveFlags) (server.AuditConfig, error) {
	mode, err := audit.ParseSyncMode(o.sync)
	if err != nil {
		return server.AuditConfig{}, fmt.Errorf("--audit-sync: %w", err)
	}
	segMB, err := parseSizeMB(o.segmentSize)
	if err != nil {
		return server.AuditConfig{}, fmt.Errorf("--audit-segment-size: %w", err)
	}
	var maxBytes, minFree int64
	if o.maxBytes != "" {
		mb, err := parseSizeMB(o.maxBytes)
		if err != nil {
			return server.AuditConfig{}, fmt.Errorf("--audit-max-bytes: %w", err)
		}
		maxBytes = mb << 20
	}
	if o.minFree != "" {
		mb, err := parseSizeMB(o.minFree)
		if err != nil {
			return server.AuditConfig{}, fmt.Errorf("--audit-min-free: %w", err)
		}
		minFree = max(mb<<20, 1)
	}
	if o.maxAge < 0 {
		return server.AuditConfig{}, fmt.Errorf("--audit-max-age: must not be negative")
	}
	if o.metricsListen != "" {
		if err := loopbackOnly(o.metricsListen, f.insecureListen); err != nil {
			return server.AuditConfig{}, err
		}
	}
	return server.AuditConfig{Sync: mode, SyncInterval: o.syncInterval, FailOpen: o.failOpen, Webhook: o.webhook,
		SegmentBytes: segMB << 20, MaxSegments: o.maxSegments, CheckpointEvery: o.checkpointEvery,
		CheckpointInterval: o.checkpointInterval, MaxBytes: maxBytes, MaxAge: o.maxAge, ArchiveDir: o.archiveDir,
		MinFreeBytes: minFree, MetricsListen: o.metricsListen, OTLPEndpoint: o.otlpEndpoint}, nil
}

// loopbackOnly refuses to serve keyless metrics beyond this host.
func loopbackOnly(addr string, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--metrics-listen: %w", err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) || insecure {
		return nil
	}
	return fmt.Errorf("--metrics-listen %s: metrics without a key are served on loopback only (or pass --insecure-listen)", addr)
}
