package e2b

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

// Listing sandboxes: the query, its cursor and one page (split from
// control.go).

// listQuery is a parsed GET /v2/sandboxes query.
type listQuery struct {
	metadata map[string]string
	states   map[string]bool
	template string
	after    time.Time
	desc     bool
	limit    int
	cursor   *cursor
}

// cursor is a position in a listing: the last sandbox returned.
type cursor struct {
	created int64 // unix ns
	id      string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.created, 10) + "." + c.id))
}

// parseCursor reads a nextToken.
func parseCursor(s string) (cursor, error) {
	bad := errs.Invalid("nextToken is not one this server issued")
	if len(s) > 256 {
		return cursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, bad
	}
	ns, id, ok := strings.Cut(string(raw), ".")
	if !ok || !sandbox.ValidID(id) {
		return cursor{}, bad
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil || n < 0 {
		return cursor{}, bad
	}
	return cursor{created: n, id: id}, nil
}

// parseMetadataQuery reads E2B's metadata filter: "k=v&k2=v2" whose keys
// and values were each URI-encoded once more by the SDK.
func parseMetadataQuery(s string) (map[string]string, error) {
	if len(s) > 8<<10 {
		return nil, errs.Invalid("metadata filter too long")
	}
	vals, err := url.ParseQuery(s)
	if err != nil {
		return nil, errs.Invalid("malformed metadata filter (want key=value&key2=value2)")
	}
	out := make(map[string]string, len(vals))
	for k, vs := range vals {
		kk, err1 := url.PathUnescape(k)
		vv, err2 := url.PathUnescape(vs[0])
		if err1 != nil || err2 != nil || kk == "" {
			return nil, errs.Invalid("malformed metadata filter (want key=value&key2=value2)")
		}
		out[kk] = vv
	}
	return out, nil
}

func parseListQuery(q url.Values, paged bool) (listQuery, error) {
	lq := listQuery{desc: true, limit: defaultPage}
	for k, vs := range q {
		if len(vs) != 1 && k != "state" {
			return lq, errs.Invalid("query parameter %s is given %d times", clipText(k), len(vs))
		}
		v := vs[0]
		switch {
		case k == "metadata":
			m, err := parseMetadataQuery(v)
			if err != nil {
				return lq, err
			}
			lq.metadata = m
		case k == "state":
			lq.states = map[string]bool{}
			for _, v := range vs {
				for _, st := range strings.Split(v, ",") {
					switch st {
					case "running", "paused":
						lq.states[st] = true
					default:
						return lq, errs.Invalid("state must be running or paused, not %s", quoteText(st))
					}
				}
			}
		case k == "template" && paged:
			lq.template = v
		case k == "startedAfter" && paged:
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return lq, errs.Invalid("startedAfter must be an RFC 3339 time")
			}
			lq.after = t
		case k == "order" && paged:
			switch v {
			case "asc":
				lq.desc = false
			case "desc":
			default:
				return lq, errs.Invalid("order must be asc or desc")
			}
		case k == "limit" && paged:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxPage {
				return lq, errs.Invalid("limit must be between 1 and %d", maxPage)
			}
			lq.limit = n
		case k == "nextToken" && paged:
			if v == "" {
				continue
			}
			c, err := parseCursor(v)
			if err != nil {
				return lq, err
			}
			lq.cursor = &c
		default:
			return lq, errs.Invalid("query parameter %s is not supported", clipText(k))
		}
	}
	return lq, nil
}

// list returns one page and the cursor of the next (nil: no more).
func (s *Server) list(r *http.Request, sc rights.Scope, lq listQuery, paged bool) ([]sandboxInfo, *cursor, error) {
	all, err := s.m.List(r.Context(), sc, lq.metadata)
	if err != nil {
		return nil, nil, err
	}
	var keep []sandbox.Sandbox
	for _, sb := range all {
		if sb.State != sandbox.StateRunning && sb.State != sandbox.StatePaused {
			continue
		}
		if lq.states != nil && !lq.states[stateOf(sb)] {
			continue
		}
		if (lq.template != "" && sb.Spec.Template != lq.template) ||
			(!lq.after.IsZero() && !sb.CreatedAt.After(lq.after)) {
			continue
		}
		keep = append(keep, sb)
	}
	// The manager lists oldest first (by creation, then id).
	if lq.desc {
		sort.SliceStable(keep, func(i, j int) bool { return before(keep[j], keep[i]) })
	}
	if lq.cursor != nil {
		c := *lq.cursor
		i := sort.Search(len(keep), func(i int) bool {
			k := cursor{created: keep[i].CreatedAt.UnixNano(), id: keep[i].ID}
			if lq.desc {
				return cursorLess(k, c)
			}
			return cursorLess(c, k)
		})
		keep = keep[i:]
	}
	var next *cursor
	if paged && len(keep) > lq.limit {
		keep = keep[:lq.limit]
		last := keep[len(keep)-1]
		next = &cursor{created: last.CreatedAt.UnixNano(), id: last.ID}
	}
	out := make([]sandboxInfo, 0, len(keep))
	for _, sb := range keep {
		out = append(out, info(sb, false))
	}
	return out, next, nil
}

func before(a, b sandbox.Sandbox) bool {
	return cursorLess(cursor{a.CreatedAt.UnixNano(), a.ID}, cursor{b.CreatedAt.UnixNano(), b.ID})
}

func cursorLess(a, b cursor) bool {
	if a.created != b.created {
		return a.created < b.created
	}
	return a.id < b.id
}

func (s *Server) listV2(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	lq, err := parseListQuery(r.URL.Query(), true)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	page, next, err := s.list(r, sc, lq, true)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	if next != nil {
		w.Header().Set(hdrNextToken, next.String())
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) listV1(w http.ResponseWriter, r *http.Request, sc rights.Scope) {
	lq, err := parseListQuery(r.URL.Query(), false)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	lq.desc = false
	page, _, err := s.list(r, sc, lq, false)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}
