package browser

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"

	"github.com/paddockhq/paddock/internal/browser/wire"
	"github.com/paddockhq/paddock/internal/rights"
	"github.com/paddockhq/paddock/internal/sandbox"
)

const (
	defaultSnapshotBytes = 128 << 10
	maxSnapshotBytes     = 2 << 20
	maxAXDepth           = 256
	maxAXName            = 200
)

// Snapshot returns the page's accessibility tree as text, one node a line
// ("- button \"Save\" [ref=e7]"), and remembers the references for the
// actions that follow (until the page navigates or the next snapshot).
func (s *Service) Snapshot(ctx context.Context, sc sandbox.Scope, id string, req wire.SnapshotRequest) (wire.SnapshotResult, error) {
	if err := sc.Need(rights.Read); err != nil {
		return wire.SnapshotResult{}, err
	}
	max, err := maxBytes(req.MaxBytes, defaultSnapshotBytes, maxSnapshotBytes)
	if err != nil {
		return wire.SnapshotResult{}, err
	}
	var out wire.SnapshotResult
	err = s.run(ctx, sc, id, rights.Read, req.Tab, "the snapshot", s.o.ActionTimeout, func(a *act) error {
		res, err := cdp.Call(a.ctx, a.t, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
		if err != nil {
			return err
		}
		text, refs, cut := renderAX(res.Nodes, max)
		a.tab.setRefs(refs)
		p := a.page()
		out = wire.SnapshotResult{Tab: p.Tab, URL: p.URL, Title: p.Title, Snapshot: text, Refs: len(refs), Truncated: cut}
		return nil
	})
	return out, err
}

// Roles that only group or carry text another line shows; their children
// are shown in their place.
var skipRoles = map[string]bool{"none": true, "generic": true, "InlineTextBox": true, "LineBreak": true,
	"presentation": true, "Ignored": true, "IgnoredRole": true, "ListMarker": true}

// Roles whose value is worth showing.
var valueRoles = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "slider": true,
	"spinbutton": true, "progressbar": true, "scrollbar": true, "meter": true}

// renderAX renders an accessibility tree (as Chromium sends it: a flat
// list with child ids; the page controls it, so cycles and depth are
// bounded) in at most max bytes, with a reference for every node that has
// a DOM node.
func renderAX(nodes []*accessibility.Node, max int) (string, map[string]cdp.BackendNodeID, bool) {
	byID := make(map[accessibility.NodeID]*accessibility.Node, len(nodes))
	for _, n := range nodes {
		if n != nil {
			byID[n.NodeID] = n
		}
	}
	var root *accessibility.Node
	for _, n := range nodes {
		if n != nil && (n.ParentID == "" || byID[n.ParentID] == nil) {
			root = n
			break
		}
	}
	refs := map[string]cdp.BackendNodeID{}
	if root == nil {
		return "", refs, false
	}
	var b strings.Builder
	cut := false
	seen := map[accessibility.NodeID]bool{}
	type frame struct {
		n          *accessibility.Node
		depth      int
		parentName string
	}
	stack := []frame{{n: root}}
	for len(stack) > 0 && !cut {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if f.n == nil || seen[f.n.NodeID] || f.depth > maxAXDepth {
			continue
		}
		seen[f.n.NodeID] = true
		role, name := axString(f.n.Role), clipText(oneLine(axString(f.n.Name)), maxAXName)
		childDepth, childParent := f.depth, f.parentName
		show := !f.n.Ignored && !skipRoles[role] && role != ""
		if role == "StaticText" {
			show = name != "" && !strings.Contains(f.parentName, name)
		}
		if show {
			line := axLine(f.n, role, name, f.depth, refs)
			if b.Len()+len(line) > max {
				cut = true
				break
			}
			b.WriteString(line)
			childDepth, childParent = f.depth+1, name
		}
		for i := len(f.n.ChildIDs) - 1; i >= 0; i-- {
			if c := byID[f.n.ChildIDs[i]]; c != nil {
				stack = append(stack, frame{n: c, depth: childDepth, parentName: childParent})
			}
		}
	}
	return b.String(), refs, cut
}

func axLine(n *accessibility.Node, role, name string, depth int, refs map[string]cdp.BackendNodeID) string {
	var b strings.Builder
	b.WriteString(strings.Repeat("  ", min(depth, 40)))
	b.WriteString("- ")
	if role == "StaticText" {
		b.WriteString("text: ")
		b.WriteString(name)
		b.WriteByte('\n')
		return b.String()
	}
	b.WriteString(role)
	if name != "" {
		b.WriteString(" \"")
		b.WriteString(strings.ReplaceAll(name, `"`, `\"`))
		b.WriteByte('"')
	}
	for _, p := range n.Properties {
		if p == nil {
			continue
		}
		v := axString(p.Value)
		switch p.Name {
		case accessibility.PropertyNameLevel:
			b.WriteString(" [level=" + v + "]")
		case accessibility.PropertyNameChecked, accessibility.PropertyNamePressed:
			switch v {
			case "true":
				b.WriteString(" [" + string(p.Name) + "]")
			case "mixed":
				b.WriteString(" [" + string(p.Name) + "=mixed]")
			}
		case accessibility.PropertyNameExpanded:
			b.WriteString(" [expanded=" + v + "]")
		case accessibility.PropertyNameDisabled, accessibility.PropertyNameSelected, accessibility.PropertyNameFocused,
			accessibility.PropertyNameRequired, accessibility.PropertyNameReadonly, accessibility.PropertyNameModal:
			if v == "true" {
				b.WriteString(" [" + string(p.Name) + "]")
			}
		}
	}
	if n.BackendDOMNodeID != 0 && len(refs) < maxRefs {
		ref := "e" + strconv.Itoa(len(refs)+1)
		refs[ref] = n.BackendDOMNodeID
		b.WriteString(" [ref=" + ref + "]")
	}
	if valueRoles[role] {
		if v := clipText(oneLine(axString(n.Value)), maxAXName); v != "" {
			b.WriteString(": " + v)
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// axString is an accessibility value as text.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var x any
	if json.Unmarshal(v.Value, &x) != nil {
		return ""
	}
	switch x := x.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
