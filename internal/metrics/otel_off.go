//go:build !paddock_otel

package metrics

import (
	"context"
	"fmt"

	"github.com/paddockhq/paddock/internal/errs"
)

// NewOTLPTracer is not available in this build: OpenTelemetry's modules
// are not in go.mod. Build with -tags paddock_otel once they are (see
// otel.go).
func NewOTLPTracer(context.Context, string, string) (Tracer, error) {
	return nil, fmt.Errorf("this build has no OpenTelemetry support (build with -tags paddock_otel): %w", errs.ErrUnsupported)
}
