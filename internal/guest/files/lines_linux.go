//go:build linux

package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/guest/user"
	"github.com/paddockhq/paddock/internal/guestapi"
	"github.com/paddockhq/paddock/internal/textcut"
)

// Line-range reads: the guest reads the file, so only the lines asked
// for (and at most their byte budget) cross to the host, and memory stays
// bounded by that budget and LineCutBytes whatever the file.

func (f *Service) lines(ctx context.Context, id user.ID, r guestapi.LinesRequest) (guestapi.LinesResult, error) {
	p, err := cleanPath(r.Path)
	if err != nil {
		return guestapi.LinesResult{}, err
	}
	start, end, limit, err := lineBounds(r)
	if err != nil {
		return guestapi.LinesResult{}, err
	}
	file, st, err := openRegular(p)
	if err != nil {
		return guestapi.LinesResult{}, err
	}
	defer file.Close()
	res, err := readLines(file, start, end, limit)
	if err != nil {
		return guestapi.LinesResult{}, fileErr(p, err)
	}
	res.Path, res.Size = p, st.Size
	return res, nil
}

// lineBounds fills a request's defaults and checks its bounds.
func lineBounds(r guestapi.LinesRequest) (start, end, limit int, err error) {
	if r.Start < 0 || r.End < 0 || r.MaxBytes < 0 {
		return 0, 0, 0, errs.Invalid("start, end and max_bytes must not be negative (lines count from 1)")
	}
	start = max(r.Start, 1)
	end = r.End
	if end == 0 {
		end = start + guestapi.DefaultLines - 1
	}
	if end < start {
		return 0, 0, 0, errs.Invalid("end (%d) is before start (%d)", end, start)
	}
	limit = r.MaxBytes
	if limit == 0 {
		limit = guestapi.DefaultLineBytes
	}
	if limit > guestapi.MaxLinesBytes {
		return 0, 0, 0, errs.Invalid("max_bytes is at most %d", guestapi.MaxLinesBytes)
	}
	return start, end, limit, nil
}

// readLines returns lines start..end of r (from 1, inclusive), at most
// limit bytes of them, lines over LineCutBytes cut and marked; then it
// counts the remaining lines (reading at most LineCountBytes more) for
// Total. A NUL in the range makes the result Binary.
func readLines(r io.Reader, start, end, limit int) (guestapi.LinesResult, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	out := guestapi.LinesResult{Start: start, End: start - 1}
	var content bytes.Buffer
	storing := true
	var past int64
	for n := 1; ; n++ {
		want := 0
		if storing && n >= start && n <= end {
			want = guestapi.LineCutBytes
		}
		line, size, err := nextLine(br, want)
		if size == 0 {
			if errors.Is(err, io.EOF) {
				out.Total = n - 1
				break
			}
			if err != nil {
				return guestapi.LinesResult{}, err
			}
		}
		if want > 0 {
			if bytes.IndexByte(line, 0) >= 0 {
				return guestapi.LinesResult{Start: start, End: start - 1, Binary: true}, nil
			}
			if size > len(line) {
				line = append(textcut.TrimPartialEnd(line), guestapi.LineCutMarker...)
				out.Truncated = true
			}
			// Made valid before it is counted: a replacement character is
			// three bytes where the invalid one was one.
			line = []byte(textcut.Valid(string(line)))
			switch room := limit - content.Len(); {
			case len(line) <= room:
				content.Write(line)
				out.End = n
			case content.Len() == 0:
				// One line over the whole budget: what fits of it.
				content.Write(textcut.TrimPartialEnd(line[:room]))
				out.End, out.Truncated, storing = n, true, false
			default:
				out.Truncated, storing = true, false
			}
		}
		if n > out.End {
			out.More = true
			past += int64(size)
		}
		if errors.Is(err, io.EOF) {
			out.Total = n
			break
		}
		if err != nil {
			return guestapi.LinesResult{}, err
		}
		if past > guestapi.LineCountBytes {
			break // too long to count: Total stays unknown
		}
	}
	out.Content = textcut.Valid(content.String())
	return out, nil
}

// nextLine reads one line (with its newline) and returns its first max
// bytes and its full size; max 0 only skips it.
func nextLine(br *bufio.Reader, max int) ([]byte, int, error) {
	var line []byte
	size := 0
	for {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		if room := max - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, size, err
	}
}
