//go:build linux

package mcp_test

import (
	"bytes"
	"image/png"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/client"
	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/mcp"
	"github.com/paddockhq/paddock/internal/tenant"
	"github.com/paddockhq/paddock/internal/testenv"
)

type codeResult struct {
	Sandbox string `json:"sandbox"`
	Status  string `json:"status"`
	Stdout  string `json:"stdout"`
	Results []struct {
		Text   string   `json:"text"`
		Main   bool     `json:"is_main_result"`
		Images []string `json:"images"`
	} `json:"results"`
	Error *struct{ Name, Value, Traceback string } `json:"error"`
}

func needKernels(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import ipykernel, matplotlib").Run(); err != nil {
		t.Skipf("needs /usr/bin/python3 with ipykernel and matplotlib (Debian packages) for the host template: %v", err)
	}
}

// run_code from the official MCP client over streamable HTTP: state
// across calls, an error with its traceback, and a matplotlib chart as
// image content that decodes as a PNG.
func TestRunCode(t *testing.T) {
	testenv.RequireRoot(t)
	needKernels(t)
	h := newHarness(t, harnessOptions{})
	cs := h.connectHTTP(h.key("a", tenant.Quotas{}).Key)

	var out codeResult
	res := call(t, cs, "run_code", map[string]any{"code": "x = 20\nprint('hello')\nx * 2"}, &out)
	mustOK(t, "run_code", res)
	if out.Status != "ok" || out.Stdout != "hello\n" || len(out.Results) != 1 || out.Results[0].Text != "40" || !out.Results[0].Main {
		t.Fatalf("first cell: %+v", out)
	}
	if call(t, cs, "run_code", map[string]any{"code": "x", "sandbox": out.Sandbox}, &out); len(out.Results) != 1 || out.Results[0].Text != "20" {
		t.Fatalf("state across calls: %+v", out)
	}
	call(t, cs, "run_code", map[string]any{"code": "def f():\n    raise KeyError('k')\nf()"}, &out)
	if out.Status != "error" || out.Error == nil || out.Error.Name != "KeyError" || !bytes.Contains([]byte(out.Error.Traceback), []byte("f()")) {
		t.Fatalf("error: %+v", out.Error)
	}

	res = call(t, cs, "run_code", map[string]any{"code": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [2, 1, 3])\nplt.title('t')\nplt.show()"}, &out)
	mustOK(t, "run_code chart", res)
	var imgs []*sdk.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*sdk.ImageContent); ok {
			imgs = append(imgs, ic)
		}
	}
	if len(imgs) != 1 || imgs[0].MIMEType != "image/png" || len(out.Results) != 1 || len(out.Results[0].Images) != 1 {
		t.Fatalf("chart: %d images, result %+v", len(imgs), out)
	}
	img, err := png.Decode(bytes.NewReader(imgs[0].Data))
	if err != nil || img.Bounds().Dx() < 100 {
		t.Fatalf("the image does not decode as a PNG: %v", err)
	}
	// The first content is the JSON text, as for every tool.
	if _, ok := res.Content[0].(*sdk.TextContent); !ok {
		t.Fatalf("first content is %T", res.Content[0])
	}
	wantError(t, "no code", call(t, cs, "run_code", map[string]any{"code": ""}, nil), "code")
	wantError(t, "bad language", call(t, cs, "run_code", map[string]any{"code": "1", "language": "cobol"}, nil), "cobol")
}

// The same tool through the REST client backend (paddock mcp).
func TestRunCodeClientBackend(t *testing.T) {
	testenv.RequireRoot(t)
	needKernels(t)
	h := newHarness(t, harnessOptions{})
	k := h.key("a", tenant.Quotas{})
	srv, err := mcp.New(client.New(h.hs.URL, k.Key), mcp.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cs, done := connectMemory(t, srv, auth.Principal{})
	var out codeResult
	mustOK(t, "run_code", call(t, cs, "run_code", map[string]any{"code": "sum(range(10))"}, &out))
	if out.Status != "ok" || len(out.Results) != 1 || out.Results[0].Text != "45" {
		t.Fatalf("through REST: %+v", out)
	}
	if ev := h.rec.find("code.execute", "intent", out.Sandbox); len(ev) == 0 || ev[0].Actor != k.ID {
		t.Fatalf("code.execute events through REST = %+v", ev)
	}
	_ = cs.Close()
	<-done
}
