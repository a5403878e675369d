package browser

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp/kb"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/sandbox"
)

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in, kind, value string
		ok              bool
	}{
		{"#email", byCSS, "#email", true},
		{"button.primary > span", byCSS, "button.primary > span", true},
		{"css=text=not-a-prefix", byCSS, "text=not-a-prefix", true},
		{"text=Sign in", byText, "Sign in", true},
		{`text="Sign in"`, byText, "Sign in", true},
		{"text='x'", byText, "x", true},
		{"ref=e12", byRef, "e12", true},
		{"ref=[ref=e3]", byRef, "e3", true},
		{"ref=e0", "", "", false},
		{"ref=e012", "", "", false},
		{"ref=12", "", "", false},
		{"ref=e99999999", "", "", false},
		{"text=", "", "", false},
		{"text=  ", "", "", false},
		{"", "", "", false},
		{"   ", "", "", false},
		{"a\x00b", "", "", false},
		{"\xff", "", "", false},
		{strings.Repeat("a", maxSelector+1), "", "", false},
	} {
		kind, value, err := ParseSelector(tc.in)
		if (err == nil) != tc.ok || kind != tc.kind || value != tc.value {
			t.Errorf("%q: got %q %q %v", tc.in, kind, value, err)
		}
		if err != nil && errs.CodeOf(err) != errs.CodeInvalid {
			t.Errorf("%q: error code %s", tc.in, errs.CodeOf(err))
		}
	}
}

func TestTargetOf(t *testing.T) {
	for _, tc := range []struct {
		in       wire.Target
		required bool
		kind     string
		has, ok  bool
	}{
		{wire.Target{Selector: "#a"}, true, byCSS, true, true},
		{wire.Target{Text: "Save"}, true, byText, true, true},
		{wire.Target{Ref: "e4"}, true, byRef, true, true},
		{wire.Target{}, true, "", false, false},
		{wire.Target{}, false, "", false, true},
		{wire.Target{Selector: "#a", Text: "b"}, false, "", false, false},
		{wire.Target{Ref: "x"}, true, "", false, false},
	} {
		sel, has, err := targetOf(tc.in, tc.required)
		if (err == nil) != tc.ok || has != tc.has || sel.kind != tc.kind {
			t.Errorf("%+v: got %+v %v %v", tc.in, sel, has, err)
		}
	}
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"#a", "text=Go", "ref=e1", "css=div", "ref=[ref=e9]", "text=\"\"", "ref=e+1", "ref=e-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		kind, value, err := ParseSelector(s)
		if err != nil {
			return
		}
		switch kind {
		case byCSS, byText:
			if strings.TrimSpace(value) == "" {
				t.Fatalf("%q: empty %s selector", s, kind)
			}
		case byRef:
			if _, err := refSelector(value); err != nil || !strings.HasPrefix(value, "e") {
				t.Fatalf("%q: ref %q does not round-trip", s, value)
			}
		default:
			t.Fatalf("%q: kind %q", s, kind)
		}
	})
}

func TestParseKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		r    rune
		mods kb.Modifier
		ok   bool
	}{
		{"Enter", '\r', 0, true},
		{"enter", '\r', 0, true},
		{"Return", '\r', 0, true},
		{"Tab", '\t', 0, true},
		{"Escape", '\u001b', 0, true},
		{"Esc", '\u001b', 0, true},
		{"ArrowDown", '\u0301', 0, true},
		{"Down", '\u0301', 0, true},
		{"a", 'a', 0, true},
		{"A", 'A', 0, true},
		{"Control+A", 'A', kb.ModifierCtrl, true},
		{"Ctrl+Shift+k", 'k', kb.ModifierCtrl | kb.ModifierShift, true},
		{"Meta+ArrowLeft", '\u0302', kb.ModifierMeta, true},
		{"+", '+', 0, true},
		{"Control++", '+', kb.ModifierCtrl, true},
		{"Space", ' ', 0, true},
		{"KeyA", 'a', 0, true},
		{"F5", '\u0805', 0, true},
		{"PageDown", '\u0307', 0, true},
		{"é", 'é', 0, true},
		{"", 0, 0, false},
		{"Hyperdrive", 0, 0, false},
		{"Banana+A", 0, 0, false},
		{"Control+", 0, 0, false},
		{strings.Repeat("a", 65), 0, 0, false},
	} {
		k, err := parseKey(tc.in)
		if (err == nil) != tc.ok || k.r != tc.r || k.mods != tc.mods {
			t.Errorf("%q: got %q %v %v", tc.in, k.r, k.mods, err)
		}
	}
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"Enter", "Control+A", "+", "Control++", "Shift+Tab", "a+b", "++", "Ctrl+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := parseKey(s)
		if err != nil {
			return
		}
		if k.r == 0 {
			t.Fatalf("%q: no key", s)
		}
		if k.mods&^(kb.ModifierAlt|kb.ModifierCtrl|kb.ModifierMeta|kb.ModifierShift) != 0 {
			t.Fatalf("%q: modifiers %v", s, k.mods)
		}
	})
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"https://example.com/a?b=c", "https://example.com/a?b=c", true},
		{"http://127.0.0.1:8000/", "http://127.0.0.1:8000/", true},
		{"example.com/path", "http://example.com/path", true},
		{"file:///workspace/index.html", "file:///workspace/index.html", true},
		{"data:text/html,<h1>x</h1>", "data:text/html,<h1>x</h1>", true},
		{"about:blank", "about:blank", true},
		{"javascript:alert(1)", "", false},
		{"chrome://settings", "", false},
		{"http://", "", false},
		{"", "", false},
		{"\xff", "", false},
	} {
		u, err := checkURL(tc.in)
		if (err == nil) != tc.ok || (err == nil && u.String() != tc.want) {
			t.Errorf("%q: got %v %v", tc.in, u, err)
		}
	}
}

func TestPolicyRefuses(t *testing.T) {
	allow := &sandbox.Network{Mode: sandbox.NetAllowlist, Allow: []string{"site.test", "*.docs.test:443"}, AllowCIDR: []string{"203.0.113.0/24"}}
	for _, tc := range []struct {
		n       *sandbox.Network
		url     string
		refused bool
		why     string
	}{
		{nil, "http://example.com/", true, `"none"`},
		{&sandbox.Network{Mode: sandbox.NetNone}, "https://example.com/", true, `"none"`},
		{nil, "http://localhost:3000/", false, ""},
		{nil, "http://127.0.0.1/", false, ""},
		{nil, "http://[::1]:8080/", false, ""},
		{nil, "http://app.localhost/", false, ""},
		{nil, "file:///etc/hosts", false, ""},
		{&sandbox.Network{Mode: sandbox.NetOpen}, "http://example.com/", false, ""},
		{allow, "http://site.test/", false, ""},
		{allow, "http://SITE.test./x", false, ""},
		{allow, "http://other.test/", true, "other.test:80"},
		{allow, "https://a.docs.test/", false, ""},
		{allow, "http://a.docs.test/", true, "a.docs.test:80"},
		{allow, "http://203.0.113.7/", false, ""},
		{allow, "http://198.51.100.1/", true, "198.51.100.1"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		refused, why := policyRefuses(tc.n, u)
		if refused != tc.refused || !strings.Contains(why, tc.why) {
			t.Errorf("%s with %+v: refused=%v %q", tc.url, tc.n, refused, why)
		}
	}
}

func TestRewriteDevToolsJSON(t *testing.T) {
	base := "wss://paddock.example/v1/sandboxes/sb-1/browser"
	version := `{"Browser":"Chrome/156.0.8078.114","Protocol-Version":"1.3","webSocketDebuggerUrl":"ws://127.0.0.1:40719/devtools/browser/9d42"}`
	out, err := rewriteDevToolsJSON([]byte(version), "version", base)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil || v["webSocketDebuggerUrl"] != base+"/cdp" || v["Browser"] != "Chrome/156.0.8078.114" {
		t.Fatalf("version: %s %v", out, err)
	}
	list := `[{"id":"BAAF","type":"page","url":"about:blank","devtoolsFrontendUrl":"https://x/?ws=127.0.0.1:1","webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/page/BAAF"},
	{"id":"../../evil","type":"page","webSocketDebuggerUrl":"ws://x"},{"id":7}]`
	out, err = rewriteDevToolsJSON([]byte(list), "list", base)
	if err != nil {
		t.Fatal(err)
	}
	var l []map[string]any
	if err := json.Unmarshal(out, &l); err != nil || len(l) != 1 {
		t.Fatalf("list: %s %v", out, err)
	}
	if l[0]["webSocketDebuggerUrl"] != base+"/cdp/page/BAAF" || l[0]["devtoolsFrontendUrl"] != nil || strings.Contains(string(out), "127.0.0.1") {
		t.Errorf("list: %s", out)
	}
	for _, bad := range []string{"", "[", "null", `"x"`, `{"a":1}{`} {
		if out, err := rewriteDevToolsJSON([]byte(bad), "version", base); err == nil && strings.Contains(string(out), "127.0.0.1") {
			t.Errorf("%q: %s", bad, out)
		}
	}
}

func FuzzRewriteDevToolsJSON(f *testing.F) {
	f.Add([]byte(`{"webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/browser/x"}`), true)
	f.Add([]byte(`[{"id":"AB","webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/page/AB"}]`), false)
	f.Add([]byte(`[{"id":"AB"},null,{"id":"a b"}]`), false)
	base := "ws://h/v1/sandboxes/sb/browser"
	f.Fuzz(func(t *testing.T, b []byte, version bool) {
		which := "list"
		if version {
			which = "version"
		}
		out, err := rewriteDevToolsJSON(b, which, base)
		if err != nil {
			return
		}
		// Every DevTools URL handed out is the server's, with a clean id.
		var docs []map[string]any
		if version {
			var d map[string]any
			if json.Unmarshal(out, &d) != nil {
				t.Fatalf("output is not JSON: %s", out)
			}
			docs = append(docs, d)
		} else if json.Unmarshal(out, &docs) != nil {
			t.Fatalf("output is not JSON: %s", out)
		}
		for _, d := range docs {
			if u, ok := d["webSocketDebuggerUrl"]; ok {
				s, _ := u.(string)
				rest, ok := strings.CutPrefix(s, base+"/cdp")
				if !ok || strings.ContainsAny(rest, "?#% .") {
					t.Fatalf("URL %q", s)
				}
			}
		}
	})
}

func axv(v any) *accessibility.Value {
	b, _ := json.Marshal(v)
	return &accessibility.Value{Type: "string", Value: b}
}

func TestRenderAX(t *testing.T) {
	nodes := []*accessibility.Node{
		{NodeID: "1", Role: axv("RootWebArea"), Name: axv("Form"), ChildIDs: []accessibility.NodeID{"2", "3", "6", "9"}, BackendDOMNodeID: 1},
		{NodeID: "2", ParentID: "1", Role: axv("heading"), Name: axv("Sign  in"), BackendDOMNodeID: 2,
			Properties: []*accessibility.Property{{Name: accessibility.PropertyNameLevel, Value: axv(1)}},
			ChildIDs:   []accessibility.NodeID{"4"}},
		{NodeID: "4", ParentID: "2", Role: axv("StaticText"), Name: axv("Sign in")},
		{NodeID: "3", ParentID: "1", Role: axv("generic"), ChildIDs: []accessibility.NodeID{"5"}},
		{NodeID: "5", ParentID: "3", Role: axv("textbox"), Name: axv("Email"), Value: axv("a@b.c"), BackendDOMNodeID: 5,
			Properties: []*accessibility.Property{{Name: accessibility.PropertyNameFocused, Value: axv(true)}}},
		{NodeID: "6", ParentID: "1", Role: axv("checkbox"), Name: axv(`Keep "me"`), BackendDOMNodeID: 6,
			Properties: []*accessibility.Property{{Name: accessibility.PropertyNameChecked, Value: axv("true")}}},
		{NodeID: "9", ParentID: "1", Ignored: true, ChildIDs: []accessibility.NodeID{"10", "1"}}, // a cycle back to the root
		{NodeID: "10", ParentID: "9", Role: axv("button"), Name: axv("Go"), BackendDOMNodeID: 10,
			Properties: []*accessibility.Property{{Name: accessibility.PropertyNameDisabled, Value: axv(true)}}},
	}
	text, refs, cut := renderAX(nodes, 1<<20)
	want := `- RootWebArea "Form" [ref=e1]
  - heading "Sign in" [level=1] [ref=e2]
  - textbox "Email" [focused] [ref=e3]: a@b.c
  - checkbox "Keep \"me\"" [checked] [ref=e4]
  - button "Go" [disabled] [ref=e5]
`
	if text != want || cut {
		t.Errorf("got (cut %v):\n%s\nwant:\n%s", cut, text, want)
	}
	if refs["e3"] != cdp.BackendNodeID(5) || refs["e5"] != cdp.BackendNodeID(10) || len(refs) != 5 {
		t.Errorf("refs %v", refs)
	}
	text, _, cut = renderAX(nodes, 60)
	if !cut || len(text) > 60 || !strings.HasPrefix(text, "- RootWebArea") {
		t.Errorf("bounded: cut=%v %q", cut, text)
	}
	if text, refs, _ := renderAX(nil, 100); text != "" || len(refs) != 0 {
		t.Errorf("empty tree: %q", text)
	}
}

func TestChromiumArgs(t *testing.T) {
	args := ChromiumArgs(Options{ProfileDir: "/p", Width: 800, Height: 600, ExtraArgs: []string{"--lang=fr"}})
	joined := strings.Join(args, " ")
	for _, want := range []string{"--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "--user-data-dir=/p", "--window-size=800,600", "--no-proxy-server",
		"--disable-background-networking", "--lang=fr"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %s in %s", want, joined)
		}
	}
	if args[len(args)-1] != "about:blank" {
		t.Errorf("last argument %q", args[len(args)-1])
	}
	req := launch(Options{})
	if req.Path != DefaultChromium || req.ProfileDir != DefaultProfileDir || req.DownloadDir != DefaultDownloadDir ||
		req.SmallShmArg != "--disable-dev-shm-usage" || req.ShmMinBytes != MinShmBytes || !json.Valid([]byte(req.Preferences)) {
		t.Errorf("start request %+v", req)
	}
	if !strings.Contains(req.Preferences, DefaultDownloadDir) {
		t.Errorf("preferences %s", req.Preferences)
	}
}

func TestClipText(t *testing.T) {
	if got := clipText("héllo wörld", 2); got != "h…" {
		t.Errorf("got %q", got)
	}
	if got, cut := clipBytes("aé", 2); got != "a" || !cut {
		t.Errorf("got %q %v", got, cut)
	}
}
