package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"

	"github.com/paddockhq/paddock/internal/errs"
)

// The page-side halves of the actions (js/). They run in the page's main
// world: a page can interfere with its own automation, never with
// anything outside its sandbox.
var (
	//go:embed js/find.js
	jsFind string
	//go:embed js/point.js
	jsPoint string
	//go:embed js/focus.js
	jsFocus string
	//go:embed js/scroll.js
	jsScroll string
	//go:embed js/text.js
	jsText string
	//go:embed js/markdown.js
	jsMarkdown string
)

// scriptError is an exception a page script threw.
func scriptError(ex *runtime.ExceptionDetails) error {
	msg := ex.Text
	if ex.Exception != nil && ex.Exception.Description != "" {
		msg = ex.Exception.Description
	}
	return errs.New(errs.CodeInvalid, "the script threw: %s", clipText(msg, 500))
}

// evalFunc evaluates (src)(args) and returns the result as a remote object
// (byValue: as JSON in Value).
func evalFunc(ctx context.Context, s cdp.Session, src string, args any, byValue bool) (*runtime.RemoteObject, error) {
	a, err := json.Marshal(args) // escapes <, >, &, U+2028/9: safe inside a script
	if err != nil {
		return nil, err
	}
	res, err := cdp.Call(ctx, s, runtime.Evaluate, runtime.EvaluateParams{
		Expression: "(" + src + ")(" + string(a) + ")", ReturnByValue: &byValue, ObjectGroup: "paddock"})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		return nil, scriptError(res.ExceptionDetails)
	}
	if res.Result == nil {
		return nil, fmt.Errorf("no result")
	}
	return res.Result, nil
}

// evalValue is evalFunc decoding the JSON value into out.
func evalValue(ctx context.Context, s cdp.Session, src string, args, out any) error {
	obj, err := evalFunc(ctx, s, src, args, true)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(obj.Value, out); err != nil {
		return fmt.Errorf("page script result: %w", err)
	}
	return nil
}

// callOn calls the function fn with the element obj as this, decoding the
// JSON result into out (nil: ignored).
func callOn(ctx context.Context, s cdp.Session, obj runtime.RemoteObjectID, fn string, out any, args ...any) error {
	yes := true
	var cargs []*runtime.CallArgument
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		cargs = append(cargs, &runtime.CallArgument{Value: b})
	}
	res, err := cdp.Call(ctx, s, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn, ObjectID: obj, Arguments: cargs, ReturnByValue: &yes, AwaitPromise: &yes})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return scriptError(res.ExceptionDetails)
	}
	if out == nil || res.Result == nil {
		return nil
	}
	if err := json.Unmarshal(res.Result.Value, out); err != nil {
		return fmt.Errorf("page script result: %w", err)
	}
	return nil
}

// release frees the remote objects the actions made; briefly, since the
// page may be hung (that is often why an action ended).
func release(ctx context.Context, s cdp.Session) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 500*time.Millisecond)
	defer cancel()
	_, _ = cdp.Call(ctx, s, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: "paddock"})
}
