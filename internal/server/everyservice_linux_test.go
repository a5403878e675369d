package server_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/auth"
	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// notForCallers are exported methods that take a Scope without acting for
// a caller: hooks the server calls with a scope the caller already passed
// a check with.
var notForCallers = map[string]string{
	"*browser.Service.SandboxCreated": "the manager's hook after a create it authorised",
}

// TestEveryServiceMethodChecksARight is the walk beneath the surfaces:
// every exported method of the services in serve's house that takes a
// caller's Scope (found by reflection, so a method added later is walked
// too) refuses a caller holding no right with forbidden — before it
// looks anything up, reads an argument or acts. The REST and E2B gates
// check the routes' rights first; this is what stands if one is wrong,
// and what every other surface (the CLI, MCP, the console) relies on.
func TestEveryServiceMethodChecksARight(t *testing.T) {
	w := newWalk(t)
	s := w.e.Stack
	services := []any{s.Manager, s.Auth, s.Secrets, s.Browser, s.Recorder().Reader()}
	scopeT := reflect.TypeOf(rights.Scope{})
	ctxT := reflect.TypeOf((*context.Context)(nil)).Elem()
	errT := reflect.TypeOf((*error)(nil)).Elem()
	callers := map[string]rights.Scope{
		"key":   {Tenant: auth.DefaultTenant, Actor: "walk"},
		"token": {Tenant: auth.DefaultTenant, Actor: "walk", Sandbox: w.a, Token: true},
	}
	n := 0
	for _, svc := range services {
		v := reflect.ValueOf(svc)
		if v.IsNil() {
			t.Fatalf("%T is not in the house", svc)
		}
		for i := 0; i < v.NumMethod(); i++ {
			m := v.Type().Method(i)
			ft := m.Type // receiver first
			at := -1
			for j := 1; j < ft.NumIn(); j++ {
				if ft.In(j) == scopeT {
					at = j
				}
			}
			if at < 0 {
				continue
			}
			name := fmt.Sprintf("%s.%s", v.Type(), m.Name)
			if why, ok := notForCallers[name]; ok {
				t.Logf("%s: not walked (%s)", name, why)
				continue
			}
			n++
			errAt := -1
			for j := 0; j < ft.NumOut(); j++ {
				if ft.Out(j) == errT {
					errAt = j
				}
			}
			if errAt < 0 {
				t.Errorf("%s takes a caller's Scope but returns no error: it cannot refuse", name)
				continue
			}
			for who, sc := range callers {
				args := make([]reflect.Value, ft.NumIn()-1)
				for j := 1; j < ft.NumIn(); j++ {
					switch in := ft.In(j); {
					case j == at:
						args[j-1] = reflect.ValueOf(sc)
					case in == ctxT:
						args[j-1] = reflect.ValueOf(context.Background())
					case in == reflect.TypeOf(rights.Right(0)):
						args[j-1] = reflect.ValueOf(rights.Read) // the right it is asked to check
					case in.Kind() == reflect.String:
						args[j-1] = reflect.ValueOf(w.a).Convert(in) // the sandbox (or name) it would act on
					default:
						args[j-1] = reflect.Zero(in)
					}
				}
				err, panicked := callBounded(v.Method(i), args, errAt)
				switch {
				case panicked != nil:
					t.Errorf("%s for a %s holding no right panicked (%v): it read its arguments before checking a right", name, who, panicked)
				case errs.CodeOf(err) != errs.CodeForbidden:
					t.Errorf("%s for a %s holding no right: %v (code %s), want forbidden", name, who, err, errs.CodeOf(err))
				}
			}
		}
	}
	if n < 60 {
		t.Errorf("walked %d service methods: the services look missing", n)
	}
	t.Logf("walked %d service methods", n)
}

// callBounded calls fn(args) and returns its error result; a method that
// does not refuse at once and blocks is cut off (and reported).
func callBounded(fn reflect.Value, args []reflect.Value, errAt int) (err error, panicked any) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		call := fn.Call
		if fn.Type().IsVariadic() {
			call = fn.CallSlice // the last argument is the variadic slice itself
		}
		out := call(args)
		err, _ = out[errAt].Interface().(error)
	}()
	select {
	case <-done:
		return err, panicked
	case <-time.After(20 * time.Second):
		return errs.New(errs.CodeTimeout, "blocked for 20 s instead of refusing"), nil
	}
}
