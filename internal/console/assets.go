package console

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/internal/errs"
)

// The built page (web/console: npm run build writes here). The output is
// committed, so a plain go build embeds it; TestAssetsReproducible
// rebuilds it and compares byte for byte.
//
//go:embed assets
var assetFS embed.FS

type asset struct {
	body []byte
	etag string
	ct   string
}

var assets = sync.OnceValue(func() map[string]asset {
	out := map[string]asset{}
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return out
	}
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return nil
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		out[p] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, ct: ct}
		return nil
	})
	return out
})

var errNoAsset = errs.NotFound("no such console file")

// missingPage is served when the page was never built into this binary.
const missingPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Paddock console</title></head>
<body><main><h1>The console was not built into this binary</h1>
<p>Build it with <code>make console</code> (needs Node.js and npm), then rebuild paddock.</p></main></body></html>`

func (c *Console) index(w http.ResponseWriter, r *http.Request) {
	a, ok := assets()["index.html"]
	if !ok {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(missingPage))
		return
	}
	serveAsset(w, r, a, "no-cache")
}

func (c *Console) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "index.html" || strings.Contains(name, "/") {
		writeError(w, errNoAsset)
		return
	}
	a, ok := assets()[name]
	if !ok {
		writeError(w, errNoAsset)
		return
	}
	serveAsset(w, r, a, "no-cache")
}

func serveAsset(w http.ResponseWriter, r *http.Request, a asset, cache string) {
	h := w.Header()
	h.Set("Content-Type", a.ct)
	h.Set("Cache-Control", cache)
	h.Set("ETag", a.etag)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	_, _ = w.Write(a.body)
}
