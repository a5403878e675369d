package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/paddockhq/paddock/wire"
)

// Template wire types (docs/templates.md).
type (
	TemplatePullRequest = wire.TemplatePullRequest
	TemplateEvent       = wire.TemplateEvent
	TemplateDefaults    = wire.TemplateDefaults
)

// TemplateBuild is a build's parameters (the context goes as a tar body).
type TemplateBuild struct {
	Name       string
	Dockerfile string // path in the context; default "Dockerfile"
	BuildArgs  map[string]string
	Target     string
	Network    string // "none" (default) or "allowlist"
	Allow      []string
	NoCache    bool
	Replace    bool
	Shared     bool
}

func templatePath(name, suffix string) string {
	return "/v1/templates/" + url.PathEscape(name) + suffix
}

// Template describes one template, with its image defaults.
func (c *Client) Template(ctx context.Context, name string) (Template, error) {
	return do[Template](ctx, c, http.MethodGet, templatePath(name, ""), nil)
}

// DeleteTemplate removes a template (refused while sandboxes use it).
func (c *Client) DeleteTemplate(ctx context.Context, name string) error {
	return c.call(ctx, http.MethodDelete, templatePath(name, ""), nil, nil)
}

// PullTemplate pulls an image as a template; progress, if set, gets the
// server's progress events as they come.
func (c *Client) PullTemplate(ctx context.Context, req TemplatePullRequest, progress func(TemplateEvent)) (Template, error) {
	r, err := c.newRequest(ctx, http.MethodPost, "/v1/templates/pull", req)
	if err != nil {
		return Template{}, err
	}
	return c.templateStream(r, progress)
}

// ImportTemplate uploads an archive (docker save, OCI layout tar,
// oci-archive) of size bytes as template name.
func (c *Client) ImportTemplate(ctx context.Context, name, tag string, shared, replace bool, archive io.Reader, size int64, progress func(TemplateEvent)) (Template, error) {
	q := url.Values{wire.TemplateBuildName: {name}}
	if tag != "" {
		q.Set(wire.TemplateImportTag, tag)
	}
	setBool(q, wire.TemplateBuildShared, shared)
	setBool(q, wire.TemplateBuildReplace, replace)
	r, err := c.uploadRequest(ctx, "/v1/templates/import?"+q.Encode(), archive, size)
	if err != nil {
		return Template{}, err
	}
	return c.templateStream(r, progress)
}

// BuildTemplate builds a Dockerfile in the build context contextTar (a
// tar stream, size -1 if unknown), streaming the build log to progress.
func (c *Client) BuildTemplate(ctx context.Context, b TemplateBuild, contextTar io.Reader, size int64, progress func(TemplateEvent)) (Template, error) {
	q := url.Values{wire.TemplateBuildName: {b.Name}}
	for k, v := range map[string]string{wire.TemplateBuildDockerfile: b.Dockerfile, wire.TemplateBuildTarget: b.Target, wire.TemplateBuildNet: b.Network} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for _, h := range b.Allow {
		q.Add(wire.TemplateBuildAllow, h)
	}
	for k, v := range b.BuildArgs {
		q.Add(wire.TemplateBuildArg, k+"="+v)
	}
	setBool(q, wire.TemplateBuildNoCache, b.NoCache)
	setBool(q, wire.TemplateBuildReplace, b.Replace)
	setBool(q, wire.TemplateBuildShared, b.Shared)
	r, err := c.uploadRequest(ctx, "/v1/templates/build?"+q.Encode(), contextTar, size)
	if err != nil {
		return Template{}, err
	}
	return c.templateStream(r, progress)
}

// ExportTemplate downloads a template as an oci-archive into w.
func (c *Client) ExportTemplate(ctx context.Context, name string, w io.Writer) (int64, error) {
	resp, err := c.open(ctx, http.MethodGet, templatePath(name, "/export"), nil, "application/x-tar")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return io.Copy(w, resp.Body)
}

// PushTemplate uploads a template to a registry reference.
func (c *Client) PushTemplate(ctx context.Context, name, ref string) error {
	return c.call(ctx, http.MethodPost, templatePath(name, "/push"), wire.TemplatePushRequest{Ref: ref}, nil)
}

func setBool(q url.Values, k string, v bool) {
	if v {
		q.Set(k, strconv.FormatBool(v))
	}
}

func (c *Client) uploadRequest(ctx context.Context, path string, body io.Reader, size int64) (*http.Request, error) {
	r, err := c.newRequest(ctx, http.MethodPost, path, nil)
	if err != nil {
		return nil, err
	}
	if body == nil {
		body = http.NoBody
	}
	r.Body = io.NopCloser(bigReader{body})
	r.ContentLength = size
	r.Header.Set("Content-Type", "application/x-tar")
	return r, nil
}

// templateStream sends r asking for the NDJSON progress stream and reads
// it to its last line: the template, or the error.
func (c *Client) templateStream(r *http.Request, progress func(TemplateEvent)) (Template, error) {
	r.Header.Set("Accept", "application/x-ndjson")
	resp, err := c.Do(r)
	if err != nil {
		return Template{}, err
	}
	defer resp.Body.Close()
	var out Template
	err = eachLine(resp.Body, "the template stream ended early", func(e TemplateEvent) (bool, error) {
		switch {
		case e.Error != nil:
			return true, c.streamError(*e.Error)
		case e.Template != nil:
			out = *e.Template
			return true, nil
		}
		if progress != nil {
			progress(e)
		}
		return false, nil
	})
	return out, err
}
