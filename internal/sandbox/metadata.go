package sandbox

import (
	"context"
	"io"

	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// File metadata is kept on the file itself, as extended attributes named
// user.<namespace>.<key> (E2B's namespace is "e2b"): it survives server
// restarts, moves with the file, goes with it when it is removed, and a
// workload sees it with getfattr. The guest bounds it per file and
// namespace (MaxMetadataKeys keys, MaxMetadataBytes in all).
const (
	MaxMetadataKeys       = guestapi.MaxMetadataKeys
	MaxMetadataKeyBytes   = guestapi.MaxMetadataKeyBytes
	MaxMetadataValueBytes = guestapi.MaxMetadataValueBytes
	MaxMetadataBytes      = guestapi.MaxMetadataBytes
)

// MetaFileInfo is a FileInfo with the file's metadata in the namespace a
// call named (nil: none).
type MetaFileInfo struct {
	wire.FileInfo
	Metadata map[string]string
}

// MetaListResult is a listing whose entries carry their metadata.
type MetaListResult struct {
	Path      string
	Entries   []MetaFileInfo
	Truncated bool
}

// metaOpt is the metadata a write sets (ns "": none).
type metaOpt struct {
	ns string
	kv map[string]string
}

func metaFile(f guestapi.FileInfo) MetaFileInfo {
	return MetaFileInfo{FileInfo: wireFile(f), Metadata: f.Metadata}
}

// WriteFileMeta is WriteFile that also replaces the file's metadata in
// namespace ns with kv (nil or empty: clears it), in the same guest call.
func (m *Manager) WriteFileMeta(ctx context.Context, sc Scope, id string, req WriteRequest, ns string, kv map[string]string, body io.Reader, size int64) (MetaFileInfo, error) {
	if err := sc.Need(rights.Write); err != nil {
		return MetaFileInfo{}, err
	}
	if err := guestapi.ValidMetadata(ns, kv); err != nil {
		return MetaFileInfo{}, err
	}
	fi, err := m.writeFile(ctx, sc, id, req, metaOpt{ns: ns, kv: kv}, body, size)
	out := metaFile(fi)
	if err == nil && out.Metadata == nil && len(kv) > 0 {
		out.Metadata = kv // what the write set, if the guest did not echo it
	}
	return out, err
}

// StatFileMeta is StatFile reporting the metadata of namespace ns.
func (m *Manager) StatFileMeta(ctx context.Context, sc Scope, id string, req StatRequest, ns string) (MetaFileInfo, error) {
	if err := sc.Need(rights.Read); err != nil {
		return MetaFileInfo{}, err
	}
	if err := guestapi.ValidMetadataNamespace(ns); err != nil {
		return MetaFileInfo{}, err
	}
	fi, err := m.statFile(ctx, sc, id, req, ns)
	return metaFile(fi), err
}

// ListFilesMeta is ListFiles reporting each entry's metadata of
// namespace ns.
func (m *Manager) ListFilesMeta(ctx context.Context, sc Scope, id string, req ListRequest, ns string) (MetaListResult, error) {
	if err := sc.Need(rights.Read); err != nil {
		return MetaListResult{}, err
	}
	if err := guestapi.ValidMetadataNamespace(ns); err != nil {
		return MetaListResult{}, err
	}
	res, err := m.listFiles(ctx, sc, id, req, ns)
	if err != nil {
		return MetaListResult{}, err
	}
	out := MetaListResult{Path: res.Path, Truncated: res.Truncated, Entries: make([]MetaFileInfo, len(res.Entries))}
	for i, f := range res.Entries {
		out.Entries[i] = metaFile(f)
	}
	return out, nil
}
