package mcp

import (
	"context"
	"errors"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paddockhq/paddock/internal/auth"
)

// ServeStdio serves one MCP session over newline-delimited JSON on r and w
// (a client's end of our stdin and stdout); see Serve.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer, p auth.Principal) error {
	return s.Serve(ctx, &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}}, p)
}

// Serve serves one MCP session over t, acting as p, until the client
// closes it or ctx is done; the session's sandbox is deleted before Serve
// returns. With a REST client as the Backend p is unused: the client holds the key.
func (s *Server) Serve(ctx context.Context, t sdk.Transport, p auth.Principal) error {
	srv, err := s.newSDK(fixedCaller(p))
	if err != nil {
		return err
	}
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		err = nil
	}
	s.endSession(ss)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
