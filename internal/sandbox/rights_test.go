package sandbox

import (
	"context"
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/errs"
	"github.com/paddockhq/paddock/internal/rights"
)

// Every exported method that acts for a caller (it takes a Scope) checks
// the caller's rights before anything else: with no rights it is refused
// (forbidden, not "not found"), whatever the arguments. Positive control:
// with every right the same call is not refused (it fails further on, on
// the missing sandbox or the empty arguments). A method added later
// without a check fails here.
func TestEveryMethodChecksRights(t *testing.T) {
	m := New(Config{}, Deps{})
	scopeType := reflect.TypeOf(Scope{})
	mv := reflect.ValueOf(m)
	checked := 0
	for i := 0; i < mv.NumMethod(); i++ {
		meth := mv.Type().Method(i)
		ft := meth.Type // with the receiver
		takesScope := false
		for j := 1; j < ft.NumIn(); j++ {
			if ft.In(j) == scopeType {
				takesScope = true
			}
		}
		if !takesScope {
			continue
		}
		checked++
		call := func(rs rights.Set) (err error, panicked any) {
			defer func() { panicked = recover() }()
			args := make([]reflect.Value, ft.NumIn()-1)
			for j := range args {
				switch in := ft.In(j + 1); {
				case in == scopeType:
					args[j] = reflect.ValueOf(Scope{Tenant: "acme", Actor: "k", Rights: rs})
				case in == reflect.TypeOf((*context.Context)(nil)).Elem():
					args[j] = reflect.ValueOf(context.Background())
				case in == reflect.TypeOf(rights.Right(0)):
					args[j] = reflect.ValueOf(rights.Read)
				case in.Kind() == reflect.String:
					args[j] = reflect.ValueOf("sb-aaaaaaaaaaaaaaaaaaaaaaaaaa").Convert(in)
				default:
					args[j] = reflect.Zero(in)
				}
			}
			out := mv.Method(i).Call(args)
			if e, ok := out[len(out)-1].Interface().(error); ok {
				err = e
			}
			return err, nil
		}
		err, p := call(0)
		if p != nil || errs.CodeOf(err) != errs.CodeForbidden {
			t.Errorf("%s with no rights: %v (panic %v), want forbidden", meth.Name, err, p)
		}
		if err, p := call(rights.All); p != nil || errs.CodeOf(err) == errs.CodeForbidden {
			t.Errorf("%s with every right: %v (panic %v), want no refusal", meth.Name, err, p)
		}
	}
	if checked < 30 {
		t.Fatalf("only %d methods take a Scope: the reflection misses some", checked)
	}
}
