package guestapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// A listing of 10,000 entries is megabytes of JSON; encoding/json spends
// most of a list's time on it. These appenders write the same JSON
// (FuzzAppendJSON checks it decodes to the same values) without
// reflection.

// AppendJSON appends r as JSON.
func (r *ListResult) AppendJSON(b []byte) []byte {
	b = append(b, `{"path":`...)
	b = appendString(b, r.Path)
	b = append(b, `,"entries":[`...)
	for i := range r.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = r.Entries[i].AppendJSON(b)
	}
	b = append(b, `],"truncated":`...)
	b = strconv.AppendBool(b, r.Truncated)
	return append(b, "}\n"...)
}

// AppendJSON appends f as JSON.
func (f *FileInfo) AppendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, f.Name)
	b = append(b, `,"path":`...)
	b = appendString(b, f.Path)
	b = append(b, `,"type":`...)
	b = appendString(b, f.Type)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, f.Size, 10)
	b = append(b, `,"mode":`...)
	b = appendString(b, f.Mode)
	b = append(b, `,"mtime":"`...)
	b = f.MTime.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if f.Target != "" {
		b = append(b, `,"target":`...)
		b = appendString(b, f.Target)
	}
	b = append(b, `,"uid":`...)
	b = strconv.AppendInt(b, int64(f.UID), 10)
	b = append(b, `,"gid":`...)
	b = strconv.AppendInt(b, int64(f.GID), 10)
	if len(f.Metadata) > 0 {
		// Keys sorted, as encoding/json writes a map.
		keys := make([]string, 0, len(f.Metadata))
		for k := range f.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, `,"metadata":{`...)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, f.Metadata[k])
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, as encoding/json would:
// control characters, quotes, backslashes and <>& escaped, invalid UTF-8
// replaced by U+FFFD, U+2028/U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// DecodeList decodes a listing. The common shape (what AppendJSON and
// encoding/json write) is parsed directly, several times faster than by
// reflection; anything else — unknown or differently cased keys, nulls,
// escapes beyond the simple ones — goes to encoding/json, which is the
// reference (FuzzListDecode holds the two to the same answers).
func DecodeList(b []byte) (ListResult, error) {
	var r ListResult
	if p := (&listParser{b: b}); p.result(&r) {
		return r, nil
	}
	r = ListResult{}
	err := json.Unmarshal(b, &r)
	return r, err
}

type listParser struct {
	b []byte
	i int
}

func (p *listParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *listParser) eat(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes (or with the two-byte ones), valid
// UTF-8; anything else is left to encoding/json.
func (p *listParser) str() (string, bool) {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", false
	}
	p.i++
	start := p.i
	var buf []byte
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			var s string
			if buf == nil {
				s = string(p.b[start:p.i])
			} else {
				s = string(append(buf, p.b[start:p.i]...))
			}
			p.i++
			if !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			var r byte
			switch p.b[p.i+1] {
			case '"', '\\', '/':
				r = p.b[p.i+1]
			case 'n':
				r = '\n'
			case 't':
				r = '\t'
			case 'r':
				r = '\r'
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			default:
				return "", false // \u escapes: encoding/json
			}
			buf = append(buf, p.b[start:p.i]...)
			buf = append(buf, r)
			p.i += 2
			start = p.i
		case c < 0x20:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

func (p *listParser) int() (int64, bool) {
	p.ws()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return n, err == nil
}

func (p *listParser) bool() (bool, bool) {
	p.ws()
	switch {
	case len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "true":
		p.i += 4
		return true, true
	case len(p.b)-p.i >= 5 && string(p.b[p.i:p.i+5]) == "false":
		p.i += 5
		return false, true
	}
	return false, false
}

// object walks the members of an object, calling field for each key.
func (p *listParser) object(field func(key string) bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	for {
		k, ok := p.str()
		if !ok || !p.eat(':') || !field(k) {
			return false
		}
		if p.eat(',') {
			continue
		}
		return p.eat('}')
	}
}

func (p *listParser) result(r *ListResult) bool {
	ok := p.object(func(k string) bool {
		var ok bool
		switch k {
		case "path":
			r.Path, ok = p.str()
		case "truncated":
			r.Truncated, ok = p.bool()
		case "entries":
			r.Entries, ok = p.entries()
		}
		return ok
	})
	p.ws()
	return ok && p.i == len(p.b)
}

func (p *listParser) entries() ([]FileInfo, bool) {
	if !p.eat('[') {
		return nil, false
	}
	out := make([]FileInfo, 0, bytesCount(p.b[p.i:], `"name"`))
	if p.eat(']') {
		return out, true
	}
	for {
		var f FileInfo
		if !p.entry(&f) {
			return nil, false
		}
		out = append(out, f)
		if p.eat(',') {
			continue
		}
		return out, p.eat(']')
	}
}

func (p *listParser) entry(f *FileInfo) bool {
	return p.object(func(k string) bool {
		var ok bool
		var n int64
		switch k {
		case "name":
			f.Name, ok = p.str()
		case "path":
			f.Path, ok = p.str()
		case "type":
			f.Type, ok = p.str()
		case "mode":
			f.Mode, ok = p.str()
		case "target":
			f.Target, ok = p.str()
		case "size":
			f.Size, ok = p.int()
		case "uid", "gid":
			if n, ok = p.int(); ok && int64(int(n)) == n {
				if k == "uid" {
					f.UID = int(n)
				} else {
					f.GID = int(n)
				}
			} else {
				ok = false
			}
		case "mtime":
			var s string
			if s, ok = p.str(); ok {
				err := f.MTime.UnmarshalText([]byte(s))
				ok = err == nil
			}
		case "metadata":
			ok = p.stringMap(&f.Metadata)
		}
		return ok
	})
}

// stringMap reads an object of strings into *m (merging, as encoding/json
// does with a repeated key).
func (p *listParser) stringMap(m *map[string]string) bool {
	if *m == nil {
		*m = map[string]string{} // even for {}, as encoding/json
	}
	return p.object(func(k string) bool {
		v, ok := p.str()
		if ok {
			(*m)[k] = v
		}
		return ok
	})
}

// bytesCount estimates the entries of a listing (for one allocation).
func bytesCount(b []byte, sep string) int { return bytes.Count(b, []byte(sep)) }
