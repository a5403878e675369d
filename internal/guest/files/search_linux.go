//go:build linux

package files

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
)

// maxVisit bounds the entries one find or search walks, so a pattern over
// a huge tree ends (Truncated) instead of running for ever.
const maxVisit = 2_000_000

// Pseudo-filesystems a walk does not descend into when it meets them below
// its start (searching "/" must not read all of /proc and /sys).
const sysfsMagic = 0x62656572

// walker visits a tree depth first, each directory's entries by name,
// never following symlinks.
type walker struct {
	ctx     context.Context
	visited int
	stopped bool // limit reached
	// enter decides whether to descend into the directory rel.
	enter func(rel string) bool
	// visit is called for every entry; returning false stops the walk.
	visit func(dirfd int, name, rel, p string, st *unix.Stat_t) bool
}

func (w *walker) walk(fd int, rel, p string, dev uint64, depth int) error {
	names, _, err := readNames(fd)
	if err != nil {
		return nil // unreadable directory: nothing in it is visible
	}
	for _, name := range names {
		if w.stopped {
			return nil
		}
		if err := w.ctx.Err(); err != nil {
			return errs.Wrap(errs.CodeTimeout, err, "cancelled")
		}
		if w.visited++; w.visited > maxVisit {
			w.stopped = true
			return nil
		}
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		cp := path.Join(p, name)
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if !w.visit(fd, name, crel, cp, &st) {
			w.stopped = true
			return nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || depth >= maxArchiveDepth || !w.enter(crel) {
			continue
		}
		cfd, err := openAt(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, 0)
		if err != nil {
			continue
		}
		if st.Dev != dev && pseudoFS(cfd) || guardProc(cfd, cp) != nil {
			unix.Close(cfd)
			continue
		}
		err = w.walk(cfd, crel, cp, st.Dev, depth+1)
		unix.Close(cfd)
		if err != nil {
			return err
		}
	}
	return nil
}

func pseudoFS(fd int) bool {
	var sf unix.Statfs_t
	if unix.Fstatfs(fd, &sf) != nil {
		return true
	}
	return sf.Type == unix.PROC_SUPER_MAGIC || sf.Type == sysfsMagic
}

func (f *Service) find(ctx context.Context, id user.ID, r guestapi.FindRequest) (guestapi.FindResult, error) {
	p, err := cleanPath(cmp.Or(r.Path, guestapi.Workspace))
	if err != nil {
		return guestapi.FindResult{}, err
	}
	g, err := compileGlob(r.Pattern)
	if err != nil {
		return guestapi.FindResult{}, err
	}
	switch r.Type {
	case "", guestapi.TypeFile, guestapi.TypeDir, guestapi.TypeSymlink, guestapi.TypeOther:
	default:
		return guestapi.FindResult{}, errs.Invalid("type must be file, dir, symlink or other")
	}
	limit := clampInt(r.Limit, guestapi.DefaultFindLimit, 1, guestapi.MaxFindLimit)
	fd, err := openDir(p)
	if err != nil {
		return guestapi.FindResult{}, err
	}
	defer unix.Close(fd)
	res := guestapi.FindResult{Matches: []guestapi.FileInfo{}}
	w := &walker{ctx: ctx, enter: g.Below}
	w.visit = func(dirfd int, name, rel, cp string, st *unix.Stat_t) bool {
		if !g.Match(rel) || (r.Type != "" && typeOf(st.Mode) != r.Type) {
			return true
		}
		if len(res.Matches) >= limit {
			res.Truncated = true
			return false
		}
		target := ""
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			target = readlinkAt(dirfd, name)
		}
		res.Matches = append(res.Matches, infoOf(cp, st, target))
		return true
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return guestapi.FindResult{}, fileErr(p, err)
	}
	if err := w.walk(fd, "", p, st.Dev, 0); err != nil {
		return guestapi.FindResult{}, err
	}
	if w.visited > maxVisit {
		res.Truncated = true
	}
	sort.Slice(res.Matches, func(i, j int) bool { return res.Matches[i].Path < res.Matches[j].Path })
	return res, nil
}

// matcher finds a query in a line.
type matcher func(line []byte) bool

func compileQuery(q string, isRegexp, ignoreCase bool) (matcher, error) {
	if q == "" {
		return nil, errs.Invalid("query is empty")
	}
	if len(q) > guestapi.MaxPatternLen {
		return nil, errs.Invalid("query is longer than %d bytes", guestapi.MaxPatternLen)
	}
	if !isRegexp && !ignoreCase {
		lit := []byte(q)
		return func(line []byte) bool { return bytes.Contains(line, lit) }, nil
	}
	expr := q
	if !isRegexp {
		expr = regexp.QuoteMeta(q)
	}
	if ignoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, errs.Invalid("query is not a valid regular expression (RE2 syntax): %s", clip(err.Error()))
	}
	return re.Match, nil
}

// maxSearchLine bounds the part of one line that is searched.
const maxSearchLine = 1 << 20

func (f *Service) search(ctx context.Context, id user.ID, r guestapi.SearchRequest) (guestapi.SearchResult, error) {
	p, err := cleanPath(cmp.Or(r.Path, guestapi.Workspace))
	if err != nil {
		return guestapi.SearchResult{}, err
	}
	match, err := compileQuery(r.Query, r.Regexp, r.IgnoreCase)
	if err != nil {
		return guestapi.SearchResult{}, err
	}
	var include *glob
	if r.Include != "" {
		if include, err = compileGlob(r.Include); err != nil {
			return guestapi.SearchResult{}, err
		}
	}
	limit := clampInt(r.Limit, guestapi.DefaultSearchLimit, 1, guestapi.MaxSearchLimit)
	maxSize := r.MaxFileSize
	if maxSize <= 0 {
		maxSize = guestapi.DefaultSearchMaxFile
	}
	maxSize = min(maxSize, guestapi.MaxSearchMaxFile)
	s := &searcher{match: match, limit: limit, maxSize: maxSize,
		res: guestapi.SearchResult{Matches: []guestapi.SearchMatch{}}, reader: bufio.NewReaderSize(nil, 64<<10)}

	pfd, err := openAt(unix.AT_FDCWD, p, unix.O_PATH, 0, 0)
	if err != nil {
		return guestapi.SearchResult{}, fileErr(p, err)
	}
	defer unix.Close(pfd)
	if err := guardProc(pfd, p); err != nil {
		return guestapi.SearchResult{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return guestapi.SearchResult{}, fileErr(p, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		file, fst, err := openRegular(p)
		if err != nil {
			return guestapi.SearchResult{}, err
		}
		s.file(file, p, fst.Size)
		file.Close()
		return s.res, nil
	case unix.S_IFDIR:
	default:
		return guestapi.SearchResult{}, notRegular(p, st.Mode)
	}
	fd, err := openDir(p)
	if err != nil {
		return guestapi.SearchResult{}, err
	}
	defer unix.Close(fd)
	w := &walker{ctx: ctx, enter: func(rel string) bool { return include == nil || include.Below(rel) }}
	w.visit = func(dirfd int, name, rel, cp string, st *unix.Stat_t) bool {
		if st.Mode&unix.S_IFMT != unix.S_IFREG || (include != nil && !include.Match(rel)) {
			return true
		}
		if st.Size > s.maxSize {
			s.res.FilesSkipped++
			return true
		}
		rfd, err := openAt(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_NONBLOCK, 0, 0)
		if err != nil {
			s.res.FilesSkipped++
			return true
		}
		file := os.NewFile(uintptr(rfd), cp)
		var now unix.Stat_t
		if unix.Fstat(rfd, &now) != nil || now.Mode&unix.S_IFMT != unix.S_IFREG {
			file.Close()
			s.res.FilesSkipped++
			return true
		}
		more := s.file(file, cp, now.Size)
		file.Close()
		return more
	}
	if err := w.walk(fd, "", p, st.Dev, 0); err != nil {
		return guestapi.SearchResult{}, err
	}
	if w.visited > maxVisit {
		s.res.Truncated = true
	}
	return s.res, nil
}

type searcher struct {
	match   matcher
	limit   int
	maxSize int64
	res     guestapi.SearchResult
	reader  *bufio.Reader
	long    []byte
}

// file greps one open file; it returns false once the result cap is hit.
func (s *searcher) file(file *os.File, p string, size int64) bool {
	if size > s.maxSize {
		s.res.FilesSkipped++
		return true
	}
	s.reader.Reset(io.LimitReader(file, s.maxSize))
	// Binary files (a NUL in the first 8000 bytes, as grep decides) are
	// skipped.
	head, _ := s.reader.Peek(8000)
	if bytes.IndexByte(head, 0) >= 0 {
		s.res.FilesSkipped++
		return true
	}
	s.res.FilesScanned++
	for n := 1; ; n++ {
		line, err := s.readLine()
		if len(line) > 0 || err == nil {
			if s.match(line) {
				if len(s.res.Matches) >= s.limit {
					s.res.Truncated = true
					return false
				}
				s.res.Matches = append(s.res.Matches, matchOf(p, n, line))
			}
		}
		if err != nil {
			return true
		}
	}
}

// readLine returns the next line without its newline, at most
// maxSearchLine bytes of it (the rest of a longer line is skipped).
func (s *searcher) readLine() ([]byte, error) {
	line, err := s.reader.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return bytes.TrimRight(line, "\r\n"), err
	}
	s.long = append(s.long[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = s.reader.ReadSlice('\n')
		if room := maxSearchLine - len(s.long); room > 0 {
			s.long = append(s.long, line[:min(len(line), room)]...)
		}
	}
	return bytes.TrimRight(s.long, "\r\n"), err
}

func matchOf(p string, n int, line []byte) guestapi.SearchMatch {
	m := guestapi.SearchMatch{Path: p, Line: n}
	if len(line) > guestapi.MaxSearchLineBytes {
		cut := guestapi.MaxSearchLineBytes
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = line[:cut]
		m.Truncated = true
	}
	m.Text = strings.ToValidUTF8(string(line), "\uFFFD")
	return m
}
