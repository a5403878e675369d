package wire

import "time"

// Template is a template sandboxes start from (GET /v1/templates,
// docs/templates.md). Image templates (Kind "image") also say where they
// came from, their layers and what their sandboxes default to.
type Template struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	SizeBytes   int64     `json:"size_bytes"`
	Ready       bool      `json:"ready"`
	// Kind is "image" for templates from OCI images and builds; "" for
	// the built-in root filesystems (host, debian).
	Kind string `json:"kind,omitempty"`
	// Shared: an admin published it for every tenant; otherwise it is
	// the caller's tenant's own.
	Shared      bool              `json:"shared"`
	Layers      int               `json:"layers,omitempty"`
	SharedBytes int64             `json:"shared_bytes,omitempty"` // of SizeBytes, in layers other templates or the build cache hold too
	Source      *TemplateSource   `json:"source,omitempty"`
	Defaults    *TemplateDefaults `json:"defaults,omitempty"`
}

// TemplateSource is where an image template came from (no credentials).
type TemplateSource struct {
	Kind             string `json:"kind"` // registry, docker-save, oci-layout, oci-archive, build
	Ref              string `json:"ref,omitempty"`
	Digest           string `json:"digest,omitempty"`
	DockerfileDigest string `json:"dockerfile_digest,omitempty"`
}

// TemplateDefaults are an image's config as its sandboxes use it.
type TemplateDefaults struct {
	Env          []string          `json:"env,omitempty"`
	WorkingDir   string            `json:"working_dir,omitempty"`
	User         string            `json:"user,omitempty"`
	UID          int               `json:"uid"`
	GID          int               `json:"gid"`
	UserError    string            `json:"user_error,omitempty"`
	ExposedPorts []string          `json:"exposed_ports,omitempty"` // "8080/tcp"
	Entrypoint   []string          `json:"entrypoint,omitempty"`
	Cmd          []string          `json:"cmd,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	StartCmd     []string          `json:"start_cmd,omitempty"`
	ReadyCmd     []string          `json:"ready_cmd,omitempty"`
}

// TemplateList is GET /v1/templates.
type TemplateList struct {
	Templates []Template `json:"templates"`
}

// TemplatePullRequest is POST /v1/templates/pull.
type TemplatePullRequest struct {
	Ref  string `json:"ref"`            // [REGISTRY/]REPO[:TAG|@DIGEST]
	Name string `json:"name,omitempty"` // default: the repository's last path element
	// Replace an existing template of that name (sandboxes using the old
	// one keep its layers until they end).
	Replace bool `json:"replace,omitempty"`
	// Shared publishes it for every tenant (admin only).
	Shared   bool     `json:"shared,omitempty"`
	StartCmd []string `json:"start_cmd,omitempty"`
	ReadyCmd []string `json:"ready_cmd,omitempty"`
}

// TemplatePushRequest is POST /v1/templates/{name}/push.
type TemplatePushRequest struct {
	Ref string `json:"ref"`
}

// TemplateEvent is one line of the NDJSON stream of a pull, import or
// build: progress, a build step or its output, then either Template
// (done) or Error (failed) as the last line.
type TemplateEvent struct {
	Step        int          `json:"step,omitempty"` // builds: 1-based over all stages
	Steps       int          `json:"steps,omitempty"`
	Stage       string       `json:"stage,omitempty"`
	Instruction string       `json:"instruction,omitempty"`
	Cached      bool         `json:"cached,omitempty"`
	Output      string       `json:"output,omitempty"` // RUN output, in chunks
	Message     string       `json:"message,omitempty"`
	Template    *Template    `json:"template,omitempty"`
	Error       *ErrorDetail `json:"error,omitempty"`
}

// Build parameters of POST /v1/templates/build (query parameters; the
// body is the build context as a tar).
const (
	TemplateBuildName       = "name"       // the template to make (required)
	TemplateBuildDockerfile = "dockerfile" // its path in the context (default Dockerfile)
	TemplateBuildArg        = "build_arg"  // K=V, repeatable
	TemplateBuildTarget     = "target"
	TemplateBuildNet        = "net"   // none (default) or allowlist
	TemplateBuildAllow      = "allow" // a host RUN may reach with net=allowlist, repeatable
	TemplateBuildNoCache    = "no_cache"
	TemplateBuildReplace    = "replace"
	TemplateBuildShared     = "shared"
	TemplateImportTag       = "tag" // import: which image of a multi-image archive
)
