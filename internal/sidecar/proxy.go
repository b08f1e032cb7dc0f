package sidecar

import (
	"context"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// ProxyOptions configures the reverse proxy to the upstream. The zero
// value is a useful default.
type ProxyOptions struct {
	// DialTimeout bounds the opening of a connection to the upstream; 0
	// means 5 s.
	DialTimeout time.Duration
	// Timeout bounds how long the upstream may stay silent: no byte read
	// from or written to its connection, from the request to the end of
	// the response body, give or take an eighth of it; 0 means no bound.
	// An exchange cut by it after the request was sent has an unknown
	// outcome (see the package documentation). It also closes a
	// connection idle that long.
	Timeout time.Duration
	// MaxIdleConns is the number of idle keep-alive connections kept to
	// the upstream; 0 means 512.
	MaxIdleConns int
}

// NewTransport returns the transport the proxy uses to reach its
// upstream: no proxy from the environment, bounded dialing and TLS
// handshakes, and enough idle connections for a busy sidecar.
func NewTransport(opts ProxyOptions) *http.Transport {
	dial := opts.DialTimeout
	if dial == 0 {
		dial = 5 * time.Second
	}
	idle := opts.MaxIdleConns
	if idle == 0 {
		idle = 512
	}
	dialer := &net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}
	dialContext := dialer.DialContext
	if d := opts.Timeout; d > 0 {
		dialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return newSilenceConn(c, d), nil
		}
	}
	return &http.Transport{
		DialContext:           dialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// silenceConn is a connection to the upstream on which every read and
// write must make progress within limit. A write moves the read deadline
// too, so that the read the transport keeps waiting on a pooled
// connection does not time out a request just written on it.
//
// Deadlines are moved coarsely: at most once per slack (an eighth of the
// limit), each to limit plus slack ahead, so the silence allowed lies
// between limit and limit plus slack. Moving a deadline resets a runtime
// timer; doing it on every read and write cost the proxy about a tenth of
// its throughput.
type silenceConn struct {
	net.Conn
	limit, slack time.Duration
	// readUntil and writeUntil are when the deadlines set last must be
	// moved again, in Unix nanoseconds. The transport reads and writes
	// from two goroutines.
	readUntil, writeUntil atomic.Int64
}

func newSilenceConn(c net.Conn, limit time.Duration) *silenceConn {
	return &silenceConn{Conn: c, limit: limit, slack: max(limit/8, time.Millisecond)}
}

func (c *silenceConn) Read(p []byte) (int, error) {
	if now := time.Now(); now.UnixNano() >= c.readUntil.Load() {
		c.Conn.SetReadDeadline(now.Add(c.limit + c.slack))
		c.readUntil.Store(now.Add(c.slack).UnixNano())
	}
	return c.Conn.Read(p)
}

func (c *silenceConn) Write(p []byte) (int, error) {
	if now := time.Now(); now.UnixNano() >= c.writeUntil.Load() {
		c.Conn.SetDeadline(now.Add(c.limit + c.slack))
		next := now.Add(c.slack).UnixNano()
		c.writeUntil.Store(next)
		c.readUntil.Store(next)
	}
	return c.Conn.Write(p)
}

// NewBareProxy returns the proxy to upstream without any idempotency: the
// same transport and rewriting as the sidecar, for comparisons.
func NewBareProxy(upstream *url.URL, opts ProxyOptions) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.SetXForwarded()
		},
		Transport:  NewTransport(opts),
		BufferPool: &buffers,
	}
}

// buffers lends the proxies the buffers they copy response bodies
// through; without it, ReverseProxy allocates 32 KiB per response.
var buffers bufferPool

type bufferPool struct{ pool sync.Pool }

func (p *bufferPool) Get() []byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return *b
	}
	return make([]byte, 32<<10)
}

func (p *bufferPool) Put(b []byte) { p.pool.Put(&b) }

// attempt follows one request to the upstream: whether the transport
// began writing it on a connection, in any of its tries. It is set from
// the transport's goroutines. It is the context that carries it (one
// allocation instead of two).
type attempt struct {
	context.Context
	sent  atomic.Bool
	trace httptrace.ClientTrace
}

type attemptKey struct{}

// Value returns the attempt for attemptKey, and what the parent context
// has for any other key.
func (a *attempt) Value(key any) any {
	if key == (attemptKey{}) {
		return a
	}
	return a.Context.Value(key)
}

// withAttempt returns ctx carrying a new attempt, traced.
func withAttempt(ctx context.Context) context.Context {
	a := &attempt{Context: ctx}
	a.trace.WroteHeaders = a.wroteHeaders
	a.trace.WroteRequest = a.wroteRequest
	return httptrace.WithClientTrace(a, &a.trace)
}

// WroteHeaders fires once the header is buffered, before it is flushed;
// WroteRequest fires after every write, failed or not. Either means bytes
// may have left.
func (a *attempt) wroteHeaders()                           { a.sent.Store(true) }
func (a *attempt) wroteRequest(httptrace.WroteRequestInfo) { a.sent.Store(true) }

// maybeSent reports whether the request of ctx may have reached the
// upstream: true unless its attempt shows that no write ever began.
func maybeSent(ctx context.Context) bool {
	a, ok := ctx.Value(attemptKey{}).(*attempt)
	return !ok || a.sent.Load()
}
