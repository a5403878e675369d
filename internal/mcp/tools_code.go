package mcp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/wire"
)

// run_code: a cell in a stateful interpreter (docs/code.md), its images
// returned as MCP image content so that a model sees the chart.

const (
	defaultCodeTimeout = 120 * time.Second
	maxCodeTimeout     = time.Hour
	// maxCodeImages bounds the images one result carries to a model; the
	// rest are listed.
	maxCodeImages = 8
	// maxCodeResultText bounds the text of one result (an HTML table can
	// be large); the cut is marked.
	maxCodeResultText = 16 << 10
)

type codeIn struct {
	Sandbox  string            `json:"sandbox,omitempty" jsonschema:"Id of the sandbox to act on. Omit it to use this session's own sandbox (created on first use, deleted when the session ends)."`
	Code     string            `json:"code" jsonschema:"The code of the cell."`
	Language string            `json:"language,omitempty" jsonschema:"python (default), javascript, typescript or bash. Runs in that language's default context; variables, imports and functions persist from call to call."`
	Context  string            `json:"context_id,omitempty" jsonschema:"Run in this context instead of the language's default (contexts are created through the REST API or CLI)."`
	Env      map[string]string `json:"env,omitempty" jsonschema:"Environment variables for this cell only."`
	TimeoutS float64           `json:"timeout_s,omitempty" jsonschema:"Interrupt the cell after this many seconds (default 120, at most 3600); the context keeps its state."`
}

type codeResultOut struct {
	Text   string   `json:"text,omitempty" jsonschema:"The result as text (text/plain, else markdown, HTML or JSON)."`
	Main   bool     `json:"is_main_result,omitempty" jsonschema:"The value of the cell's last expression (others are displays)."`
	Types  []string `json:"types" jsonschema:"Every MIME type the result has."`
	Images []string `json:"images,omitempty" jsonschema:"Image types returned as image content after this JSON."`
}

type codeOut struct {
	Sandbox        string          `json:"sandbox" jsonschema:"The sandbox the cell ran in."`
	Context        string          `json:"context_id" jsonschema:"The context the cell ran in."`
	Language       string          `json:"language"`
	Status         string          `json:"status" jsonschema:"ok, error (the code raised), timeout (interrupted; state kept), cancelled or died (the kernel ended; state lost)."`
	Stdout         string          `json:"stdout"`
	Stderr         string          `json:"stderr"`
	Results        []codeResultOut `json:"results"`
	Error          *wire.CodeError `json:"error,omitempty" jsonschema:"The error the code raised: name, value, traceback."`
	StateLost      bool            `json:"state_lost,omitempty" jsonschema:"The context's earlier variables are gone (its kernel was restarted or died)."`
	Message        string          `json:"message,omitempty"`
	ExecutionCount int             `json:"execution_count,omitempty"`
	DurationMs     float64         `json:"duration_ms"`
}

func codeTools(tb *Toolbox) {
	Add(tb, Tool{Name: "run_code", Need: rights.Of(rights.Exec), Title: "Run code in a notebook-like interpreter",
		Description: "Run a cell of Python (default), JavaScript, TypeScript or bash in a stateful interpreter inside a sandbox, " +
			"like a Jupyter notebook: variables, imports and functions persist from call to call. Returns stdout, stderr, " +
			"the value of the last expression and anything displayed (pandas tables as text, matplotlib charts as images " +
			"after the JSON), and errors with their traceback. Use exec for shell commands and programs."},
		func(c *Call, in codeIn) (codeOut, error) {
			if in.Code == "" {
				return codeOut{}, newToolError(errs.CodeInvalid, "Give `code`: the cell to run (e.g. \"import pandas as pd\\npd.__version__\").")
			}
			to, err := seconds(in.TimeoutS, defaultCodeTimeout, maxCodeTimeout, "timeout_s")
			if err != nil {
				return codeOut{}, err
			}
			var req wire.CodeExecuteRequest
			req.Code, req.Language, req.Context, req.Env, req.TimeoutMS = in.Code, in.Language, in.Context, in.Env, max(1, to.Milliseconds())
			var out codeOut
			id, err := c.On(in.Sandbox, func(id string) error {
				stdout, stderr := newCapture(defaultOutputBytes), newCapture(defaultOutputBytes)
				images := 0
				return c.Backend().ExecuteCode(c.Context(), id, req, func(ev wire.CodeEvent) error {
					switch ev.Type {
					case "start":
						out.Context, out.Language, out.StateLost = ev.Start.Context, ev.Start.Language, ev.Start.StateLost
					case "stdout":
						_, _ = stdout.Write([]byte(ev.Text))
					case "stderr":
						_, _ = stderr.Write([]byte(ev.Text))
					case "result":
						out.Results = append(out.Results, c.codeResult(ev.Result, &images))
					case "error":
						if out.Error == nil {
							out.Error = ev.Error
						}
					case "end":
						out.Status, out.Message, out.ExecutionCount, out.DurationMs = ev.End.Status, ev.End.Message, ev.End.ExecutionCount, ev.End.DurationMS
						out.StateLost = out.StateLost || ev.End.StateLost
						out.Stdout, out.Stderr = stdout.String(), stderr.String()
					}
					return nil
				})
			})
			out.Sandbox = id
			if out.Results == nil {
				out.Results = []codeResultOut{}
			}
			return out, err
		})
}

// codeResult is a result for a model: its text, and its images attached
// as image content (at most maxCodeImages per call).
func (c *Call) codeResult(r *wire.CodeResult, images *int) codeResultOut {
	out := codeResultOut{Main: r.IsMain, Types: []string{}}
	for mime := range r.Bundle {
		out.Types = append(out.Types, mime)
	}
	sort.Strings(out.Types)
	if text, ok := r.Text(); ok {
		if len(text) > maxCodeResultText {
			text = fmt.Sprintf("%s\n[... %d more bytes omitted]", text[:maxCodeResultText], len(text)-maxCodeResultText)
		}
		out.Text = text
	}
	for _, mime := range []string{"image/png", "image/jpeg"} {
		raw, ok := r.Bundle[mime]
		if !ok {
			continue
		}
		var b64 string
		if json.Unmarshal(raw, &b64) != nil {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue
		}
		if *images >= maxCodeImages {
			c.Note(fmt.Sprintf("Only the first %d images are returned.", maxCodeImages))
			continue
		}
		*images++
		c.extra = append(c.extra, &sdk.ImageContent{Data: data, MIMEType: mime})
		out.Images = append(out.Images, mime)
	}
	return out
}
