package jupyter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"
)

// ErrClosed is returned by calls on a closed client, or when a socket to
// the kernel broke.
var ErrClosed = errors.New("jupyter: connection to the kernel closed")

// Client is a Jupyter client of one kernel: shell and control requests,
// with the IOPub messages each request caused handed to its caller. The
// stdin channel is never connected: input() in a cell fails at once
// (allow_stdin is always false) rather than waiting for a person who is
// not there.
type Client struct {
	signer  *Signer
	session string

	ctx    context.Context
	cancel context.CancelFunc
	shell  zmq4.Socket
	ctrl   zmq4.Socket
	iopub  zmq4.Socket

	mu     sync.Mutex
	calls  map[string]*call
	err    error
	closed chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

type call struct {
	reply    chan Message
	idle     chan struct{}
	idleOnce sync.Once
	iopub    func(Message)
}

// DialOptions tune Dial.
type DialOptions struct {
	// Timeout bounds the whole dial, handshake included (default 10 s).
	Timeout time.Duration
}

// Dial connects to the kernel described by ci and waits until it answers
// a kernel_info_request with its IOPub subscription in place (so that no
// output of the first cell is missed: ZeroMQ's slow-joiner problem).
func Dial(ctx context.Context, ci ConnInfo, o DialOptions) (*Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if ci.SignatureScheme != "" && ci.SignatureScheme != "hmac-sha256" {
		return nil, fmt.Errorf("jupyter: unsupported signature scheme %q", ci.SignatureScheme)
	}
	ctx, cancelDial := context.WithTimeout(ctx, o.Timeout)
	defer cancelDial()

	sctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		signer:  NewSigner([]byte(ci.Key)),
		session: NewID(),
		ctx:     sctx,
		cancel:  cancel,
		calls:   make(map[string]*call),
		closed:  make(chan struct{}),
	}
	quiet := log.New(io.Discard, "", 0)
	retries := int(o.Timeout / (5 * time.Millisecond))
	opts := []zmq4.Option{
		zmq4.WithLogger(quiet),
		zmq4.WithDialerRetry(5 * time.Millisecond),
		zmq4.WithDialerMaxRetries(retries),
		zmq4.WithDialerTimeout(o.Timeout),
		zmq4.WithTimeout(o.Timeout),
		zmq4.WithAutomaticReconnect(false),
	}
	c.shell = zmq4.NewDealer(sctx, opts...)
	c.ctrl = zmq4.NewDealer(sctx, opts...)
	c.iopub = zmq4.NewSub(sctx, opts...)

	// Dial all three at once: each retries until the kernel listens.
	type res struct {
		name string
		err  error
	}
	done := make(chan res, 3)
	dial := func(name string, s zmq4.Socket, port int) {
		done <- res{name, s.Dial(ci.endpoint(port))}
	}
	go dial("shell", c.shell, ci.ShellPort)
	go dial("control", c.ctrl, ci.ControlPort)
	go dial("iopub", c.iopub, ci.IOPubPort)
	var dialErr error
	for range 3 {
		select {
		case r := <-done:
			if r.err != nil && dialErr == nil {
				dialErr = fmt.Errorf("jupyter: %s channel: %w", r.name, r.err)
			}
		case <-ctx.Done():
			if dialErr == nil {
				dialErr = ctx.Err()
			}
			c.cancel() // makes the other dials give up
		}
	}
	if dialErr != nil {
		c.Close()
		return nil, dialErr
	}
	if err := c.iopub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		c.Close()
		return nil, err
	}
	c.wg.Add(3)
	go c.readLoop(c.shell, false)
	go c.readLoop(c.ctrl, false)
	go c.readLoop(c.iopub, true)

	// Until IOPub is subscribed, the kernel's status messages are lost;
	// ask for kernel_info until its busy/idle pair arrives.
	for {
		actx, acancel := context.WithTimeout(ctx, 250*time.Millisecond)
		_, err := c.Call(actx, "shell", "kernel_info_request", struct{}{}, func(Message) {})
		acancel()
		if err == nil {
			return c, nil
		}
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			c.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("jupyter: kernel did not answer kernel_info: %w", ctx.Err())
			}
			return nil, err
		}
	}
}

// Session is the client's session id.
func (c *Client) Session() string { return c.session }

// Done is closed when the client closed or a socket broke.
func (c *Client) Done() <-chan struct{} { return c.closed }

// Err is why Done closed.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close disconnects from the kernel (the kernel itself keeps running).
func (c *Client) Close() {
	c.fail(ErrClosed)
	c.cancel()
	for _, s := range []zmq4.Socket{c.shell, c.ctrl, c.iopub} {
		if s != nil {
			_ = s.Close()
		}
	}
	c.wg.Wait()
}

func (c *Client) fail(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.closed)
	})
}

func (c *Client) readLoop(s zmq4.Socket, iopub bool) {
	defer c.wg.Done()
	for {
		zm, err := s.Recv()
		if err != nil {
			c.fail(fmt.Errorf("%w: %v", ErrClosed, err))
			return
		}
		m, err := c.signer.Decode(zm.Frames)
		if err != nil {
			// A forged, truncated (over the frame limit) or garbled
			// message: dropped; the caller learns of lost output from
			// DroppedBytes.
			continue
		}
		c.mu.Lock()
		cl := c.calls[m.Parent.MsgID]
		c.mu.Unlock()
		if cl == nil {
			continue
		}
		if !iopub {
			select {
			case cl.reply <- m:
			default: // a second reply to one request: ignored
			}
			continue
		}
		if m.Header.MsgType == "status" {
			var st struct {
				State string `json:"execution_state"`
			}
			if json.Unmarshal(m.Content, &st) == nil && st.State == "idle" {
				cl.idleOnce.Do(func() { close(cl.idle) })
				continue
			}
		}
		if cl.iopub != nil {
			cl.iopub(m)
		}
	}
}

// Call sends a request of type msgType on channel ("shell" or "control")
// and returns its reply. With iopub non-nil it also waits for the
// kernel's idle status for the request, handing every other IOPub message
// the request caused to iopub first (in the reader's goroutine: iopub must
// not block). ctx cancels the wait only; the kernel may still answer.
func (c *Client) Call(ctx context.Context, channel, msgType string, content any, iopub func(Message)) (Message, error) {
	p, err := c.Send(channel, msgType, content, iopub)
	if err != nil {
		return Message{}, err
	}
	defer p.Forget()
	return p.Wait(ctx)
}

// Pending is a request sent and not yet answered.
type Pending struct {
	c     *Client
	id    string
	cl    *call
	reply *Message
}

// ID is the request's msg_id.
func (p *Pending) ID() string { return p.id }

// Forget stops routing messages to the request.
func (p *Pending) Forget() {
	p.c.mu.Lock()
	delete(p.c.calls, p.id)
	p.c.mu.Unlock()
}

// Wait waits for the reply (and, when the request was sent with an iopub
// handler, for the kernel's idle status). It may be called again after a
// ctx expiry.
func (p *Pending) Wait(ctx context.Context) (Message, error) {
	if p.reply == nil {
		select {
		case r := <-p.cl.reply:
			p.reply = &r
		case <-ctx.Done():
			return Message{}, ctx.Err()
		case <-p.c.closed:
			return Message{}, p.c.Err()
		}
	}
	if p.cl.iopub != nil {
		select {
		case <-p.cl.idle:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		case <-p.c.closed:
			return Message{}, p.c.Err()
		}
	}
	return *p.reply, nil
}

// Send sends a request; the caller waits for it with Wait and must Forget
// it when done.
func (c *Client) Send(channel, msgType string, content any, iopub func(Message)) (*Pending, error) {
	body, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	var s zmq4.Socket
	switch channel {
	case "shell":
		s = c.shell
	case "control":
		s = c.ctrl
	default:
		return nil, fmt.Errorf("jupyter: unknown channel %q", channel)
	}
	m := Message{Header: NewHeader(c.session, msgType), Content: body}
	frames, err := c.signer.Encode(m)
	if err != nil {
		return nil, err
	}
	p := &Pending{c: c, id: m.Header.MsgID, cl: &call{reply: make(chan Message, 1), idle: make(chan struct{}), iopub: iopub}}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.calls[p.id] = p.cl
	c.mu.Unlock()
	if err := s.SendMulti(zmq4.NewMsgFrom(frames...)); err != nil {
		p.Forget()
		return nil, fmt.Errorf("%w: send: %v", ErrClosed, err)
	}
	return p, nil
}
