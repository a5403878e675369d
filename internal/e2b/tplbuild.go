package e2b

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/template"
)

// E2B's template definition (TemplateBuildStartV2, what the SDK's
// Template().fromImage(…).runCmd(…).copy(…) serialises) turned into a
// Dockerfile and a build context for Paddock's Dockerfile builder.

// tplSpec is TemplateBuildStartV2.
type tplSpec struct {
	Force             bool            `json:"force"`
	FromImage         string          `json:"fromImage"`
	FromImageRegistry json.RawMessage `json:"fromImageRegistry"`
	FromTemplate      string          `json:"fromTemplate"`
	ReadyCmd          string          `json:"readyCmd"`
	StartCmd          string          `json:"startCmd"`
	Steps             []tplStep       `json:"steps"`
}

// tplStep is TemplateStep.
type tplStep struct {
	Type            string   `json:"type"`
	Args            []string `json:"args"`
	Force           bool     `json:"force"`
	FilesHash       string   `json:"filesHash"`
	ForceUpload     *bool    `json:"forceUpload"`
	ResolveSymlinks *bool    `json:"resolveSymlinks"`
	Gzip            *bool    `json:"gzip"`
}

// Bounds of a template definition.
const (
	maxTplSteps = 256
	maxTplArg   = 64 << 10
)

var (
	reTplUser = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$`)
	reTplMode = regexp.MustCompile(`^0?[0-7]{3,4}$`)
	reEnvKey  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,255}$`)
	reHash    = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// tplPlan is a translated definition.
type tplPlan struct {
	Dockerfile []byte
	Copies     []tplCopy      // the uploaded archives, each unpacked under its Dir
	Steps      map[int]string // Dockerfile line → E2B step ("base", "1", ...)
	StartCmd   []string
	ReadyCmd   []string
	NoCache    bool
}

// tplCopy is one COPY's archive: the files of hash under Dir in the context.
type tplCopy struct {
	Dir  string
	Hash string
}

// planTemplate translates spec. Every value the caller gives lands in the
// Dockerfile as a JSON string (RUN, COPY) or a quoted word (ENV, WORKDIR),
// never as Dockerfile syntax of its own.
func planTemplate(spec tplSpec) (tplPlan, error) {
	var p tplPlan
	if len(spec.FromImageRegistry) > 0 && string(spec.FromImageRegistry) != "null" {
		return p, errs.New(errs.CodeUnsupported, "registry credentials in a template build (fromImage with credentials, fromAWSRegistry, fromGCPRegistry) are not taken: the server's --registry-auth or the tenant's REGISTRY_AUTH secret authenticates pulls (docs/templates.md)")
	}
	base := spec.FromImage
	switch {
	case spec.FromImage != "" && spec.FromTemplate != "":
		return p, errs.Invalid("give fromImage or fromTemplate, not both")
	case spec.FromTemplate != "":
		if !template.ValidName(spec.FromTemplate) {
			return p, errs.Invalid("fromTemplate %q is not a Paddock template name", clipText(spec.FromTemplate))
		}
		base = spec.FromTemplate
	case spec.FromImage == "":
		return p, errs.Invalid("a template needs fromImage or fromTemplate")
	}
	if len(base) > 512 || strings.ContainsAny(base, " \t\r\n$\\\"'") {
		return p, errs.Invalid("fromImage %q is not an image reference", clipText(base))
	}
	if len(spec.Steps) > maxTplSteps {
		return p, errs.New(errs.CodeTooLarge, "a template has at most %d steps", maxTplSteps)
	}
	var b strings.Builder
	line := 0
	emit := func(step, s string) {
		line++
		b.WriteString(s)
		b.WriteByte('\n')
		if step != "" {
			if p.Steps == nil {
				p.Steps = map[int]string{}
			}
			p.Steps[line] = step
		}
	}
	emit("base", "FROM "+base)
	p.NoCache = spec.Force
	user := "" // the USER the steps so far set ("" the image's)
	for i, st := range spec.Steps {
		step := strconv.Itoa(i + 1)
		for _, a := range st.Args {
			if len(a) > maxTplArg {
				return p, errs.New(errs.CodeTooLarge, "step %d: an argument is over %d bytes", i+1, maxTplArg)
			}
		}
		if st.Force {
			p.NoCache = true // Paddock's cache is all or nothing per build
		}
		switch st.Type {
		case "RUN":
			if len(st.Args) < 1 || len(st.Args) > 2 || st.Args[0] == "" {
				return p, errs.Invalid("step %d: RUN takes a command and an optional user", i+1)
			}
			as := ""
			if len(st.Args) == 2 && st.Args[1] != "" && st.Args[1] != user {
				as = st.Args[1]
				if !reTplUser.MatchString(as) {
					return p, errs.Invalid("step %d: %q is not a user name", i+1, clipText(as))
				}
				emit(step, "USER "+as)
			}
			emit(step, "RUN "+jsonArgs("/bin/sh", "-c", st.Args[0]))
			if as != "" {
				restore := user
				if restore == "" {
					restore = "root"
				}
				emit(step, "USER "+restore)
				if user == "" {
					user = "root"
				}
			}
		case "COPY":
			if len(st.Args) < 2 || len(st.Args) > 4 || st.Args[0] == "" || st.Args[1] == "" {
				return p, errs.Invalid("step %d: COPY takes a source, a destination, a user and a mode", i+1)
			}
			if !reHash.MatchString(st.FilesHash) {
				return p, errs.Invalid("step %d: COPY needs the filesHash of its uploaded files", i+1)
			}
			src := path.Clean("/" + st.Args[0])[1:]
			if src == "" {
				src = "." // the whole context
			}
			if strings.HasPrefix(st.Args[0], "/") || containsDotDot(st.Args[0]) {
				return p, errs.Invalid("step %d: the COPY source %q must be a path inside the template's directory", i+1, clipText(st.Args[0]))
			}
			dir := fmt.Sprintf("e2b-copy-%d", i+1)
			p.Copies = append(p.Copies, tplCopy{Dir: dir, Hash: st.FilesHash})
			flags := ""
			if len(st.Args) > 2 && st.Args[2] != "" {
				if !reTplUser.MatchString(st.Args[2]) {
					return p, errs.Invalid("step %d: %q is not a user name", i+1, clipText(st.Args[2]))
				}
				flags += " --chown=" + st.Args[2]
			}
			if len(st.Args) > 3 && st.Args[3] != "" {
				if !reTplMode.MatchString(st.Args[3]) {
					return p, errs.Invalid("step %d: %q is not an octal mode", i+1, clipText(st.Args[3]))
				}
				flags += " --chmod=" + st.Args[3]
			}
			emit(step, "COPY"+flags+" "+jsonArgs(dir+"/"+src, st.Args[1]))
		case "ENV":
			if len(st.Args) == 0 || len(st.Args)%2 != 0 {
				return p, errs.Invalid("step %d: ENV takes name and value pairs", i+1)
			}
			var kv []string
			for j := 0; j < len(st.Args); j += 2 {
				if !reEnvKey.MatchString(st.Args[j]) {
					return p, errs.Invalid("step %d: %q is not an environment variable name", i+1, clipText(st.Args[j]))
				}
				v, err := dfWord(st.Args[j+1])
				if err != nil {
					return p, errs.Invalid("step %d: the value of %s %s", i+1, st.Args[j], errs.Public(err))
				}
				kv = append(kv, st.Args[j]+"="+v)
			}
			emit(step, "ENV "+strings.Join(kv, " "))
		case "WORKDIR":
			if len(st.Args) != 1 || st.Args[0] == "" {
				return p, errs.Invalid("step %d: WORKDIR takes a directory", i+1)
			}
			w, err := dfWord(st.Args[0])
			if err != nil {
				return p, errs.Invalid("step %d: the directory %s", i+1, errs.Public(err))
			}
			emit(step, "WORKDIR "+w)
		case "USER":
			if len(st.Args) != 1 || !reTplUser.MatchString(st.Args[0]) {
				return p, errs.Invalid("step %d: USER takes a user name", i+1)
			}
			user = st.Args[0]
			emit(step, "USER "+user)
		default:
			return p, errs.Invalid("step %d: unknown step type %q", i+1, clipText(st.Type))
		}
	}
	if spec.StartCmd != "" {
		p.StartCmd = []string{"/bin/sh", "-c", spec.StartCmd}
	}
	if spec.ReadyCmd != "" {
		p.ReadyCmd = []string{"/bin/sh", "-c", spec.ReadyCmd}
	}
	p.Dockerfile = []byte(b.String())
	return p, nil
}

func containsDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// jsonArgs is the JSON (exec) form of a Dockerfile instruction's arguments.
func jsonArgs(args ...string) string {
	b, _ := json.Marshal(args)
	return string(b)
}

// dfWord quotes s as one Dockerfile word, taken literally (no variable
// expansion). Control characters have no single-line form and are refused.
func dfWord(s string) (string, error) {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return "", errs.Invalid("holds a control character, which a template value may not")
		}
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(s) + `"`, nil
}

// writeContext writes the build context: the Dockerfile, then each COPY's
// uploaded archive (a tar, gzip'd or not, untrusted) under its directory.
// Entries are rewritten, never extracted here: names made relative and
// prefixed, only files, directories and symbolic links kept, owners
// dropped; the builder's hardened extractor unpacks the result. The bytes
// of all archives' files together are bounded by max.
func writeContext(w io.Writer, p tplPlan, open func(hash string) (io.ReadCloser, error), max int64) error {
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(p.Dockerfile)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(p.Dockerfile); err != nil {
		return err
	}
	left := max
	for _, c := range p.Copies {
		if err := tw.WriteHeader(&tar.Header{Name: c.Dir + "/", Mode: 0o755, Typeflag: tar.TypeDir}); err != nil {
			return err
		}
		if err := copyArchive(tw, c, open, max, &left); err != nil {
			return err
		}
	}
	return tw.Close()
}

// maxArchiveEntries bounds the entries of one uploaded archive.
const maxArchiveEntries = 100000

func copyArchive(tw *tar.Writer, c tplCopy, open func(string) (io.ReadCloser, error), max int64, left *int64) error {
	f, err := open(c.Hash)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return errs.Invalid("the uploaded files of a COPY are not a readable gzip archive")
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) { // such names are made relative below
			return errs.Invalid("the uploaded files of a COPY are not a readable tar archive")
		}
		if n >= maxArchiveEntries {
			return errs.New(errs.CodeTooLarge, "the uploaded files of a COPY hold over %d entries", maxArchiveEntries)
		}
		name := path.Clean("/" + h.Name)[1:]
		if name == "" {
			continue
		}
		out := &tar.Header{Name: c.Dir + "/" + name, Mode: h.Mode & 0o777, ModTime: h.ModTime, Format: tar.FormatPAX}
		switch h.Typeflag {
		case tar.TypeReg:
			out.Typeflag, out.Size = tar.TypeReg, h.Size
			if h.Size > *left {
				return errs.New(errs.CodeTooLarge, "the files of a template's COPY steps are over %d MiB", max>>20)
			}
			*left -= h.Size
		case tar.TypeDir:
			out.Typeflag = tar.TypeDir
			out.Name += "/"
		case tar.TypeSymlink:
			out.Typeflag, out.Linkname = tar.TypeSymlink, h.Linkname
		default:
			continue // devices, FIFOs, hard links: not a template's files
		}
		if err := tw.WriteHeader(out); err != nil {
			return err
		}
		if out.Typeflag == tar.TypeReg {
			if _, err := io.CopyN(tw, tr, h.Size); err != nil {
				return errs.Invalid("the uploaded files of a COPY are truncated")
			}
		}
	}
}
