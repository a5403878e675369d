package dockerfile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/layers"
)

// DefaultMaxCacheEntries bounds the step cache; the oldest entries (and
// with them their hold on layers) go first.
const DefaultMaxCacheEntries = 2000

const cacheOwnerPrefix = "cache:"

// cache maps a step key to the layer the step made ("" for none). Each
// entry holds its layer in the store under owner "cache:<key>", so GC
// keeps cached layers until the entry is evicted.
type cache struct {
	dir   string
	st    *layers.Store
	max   int
	mu    sync.Mutex
	count int
}

type cacheEntry struct {
	DiffID  string    `json:"diff_id,omitempty"`
	Created time.Time `json:"created"`
}

func openCache(dir string, st *layers.Store, max int) (*cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if max <= 0 {
		max = DefaultMaxCacheEntries
	}
	c := &cache{dir: dir, st: st, max: max}
	ents, _ := os.ReadDir(dir)
	c.count = len(ents)
	return c, nil
}

// chain derives a step's key from the previous key and the step's input.
func chain(prev string, input any) string {
	data, _ := json.Marshal(input)
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// get returns the cached result of key, holding its layer in lease.
func (c *cache) get(key string, lease *layers.Lease) (layers.Layer, bool, bool) {
	data, err := os.ReadFile(filepath.Join(c.dir, key+".json"))
	if err != nil {
		return layers.Layer{}, false, false
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil {
		return layers.Layer{}, false, false
	}
	if e.DiffID == "" {
		return layers.Layer{}, false, true
	}
	l, ok := c.st.Get(e.DiffID)
	if !ok || lease.Hold(e.DiffID) != nil {
		return layers.Layer{}, false, false
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Join(c.dir, key+".json"), now, now) // LRU
	return l, true, true
}

// put records key's result.
func (c *cache) put(key, diffID string) error {
	if diffID != "" {
		if err := c.st.SetRefs(cacheOwnerPrefix+key, []string{diffID}); err != nil {
			return err
		}
	}
	data, _ := json.Marshal(cacheEntry{DiffID: diffID, Created: time.Now().UTC()})
	tmp := filepath.Join(c.dir, "."+key+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, key+".json")); err != nil {
		os.Remove(tmp)
		return err
	}
	c.mu.Lock()
	c.count++
	over := c.count > c.max
	c.mu.Unlock()
	if over {
		c.evict()
	}
	return nil
}

// evict removes the least recently used tenth of the entries.
func (c *cache) evict() {
	c.mu.Lock()
	defer c.mu.Unlock()
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type aged struct {
		key string
		t   time.Time
	}
	var all []aged
	for _, e := range ents {
		k, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		if fi, err := e.Info(); err == nil {
			all = append(all, aged{k, fi.ModTime()})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].t.Before(all[j].t) })
	n := len(all) - c.max*9/10
	for i := 0; i < n && i < len(all); i++ {
		os.Remove(filepath.Join(c.dir, all[i].key+".json"))
		_ = c.st.DropRefs(cacheOwnerPrefix + all[i].key)
	}
	c.count = len(all) - max(n, 0)
}

// digester hashes what is written to it.
type digester struct{ h hash.Hash }

func newDigester() *digester { return &digester{sha256.New()} }

func (d *digester) Write(p []byte) (int, error) { return d.h.Write(p) }

func (d *digester) sum() string { return "sha256:" + hex.EncodeToString(d.h.Sum(nil)) }
