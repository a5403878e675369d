//go:build !linux

package bench

import (
	"context"
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

func floorShot() *shot {
	s := &shot{res: Result{Name: sFloor, Description: describe(sFloor)}}
	s.res = s.res.without(StatusMissing, fmt.Errorf("the floor: %w", errs.ErrUnsupported).Error())
	return s
}

func (r *runner) peerShot(ctx context.Context, name string) *shot {
	s := &shot{res: r.result(name)}
	s.res = s.res.without(StatusMissing, fmt.Errorf("peers need Linux: %w", errs.ErrUnsupported).Error())
	return s
}
