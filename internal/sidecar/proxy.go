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
	// Timeout bounds a whole exchange with the upstream, from the first
	// attempt to connect to the end of the response body; 0 means none.
	// An exchange cut by it after the request was sent has an unknown
	// outcome (see the package documentation).
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
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          idle,
		MaxIdleConnsPerHost:   idle,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
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
// the transport's goroutines.
type attempt struct {
	sent  atomic.Bool
	trace httptrace.ClientTrace
}

type attemptKey struct{}

// withAttempt returns ctx carrying a new attempt, traced.
func withAttempt(ctx context.Context) context.Context {
	a := &attempt{}
	a.trace.WroteHeaders = a.wroteHeaders
	a.trace.WroteRequest = a.wroteRequest
	ctx = httptrace.WithClientTrace(ctx, &a.trace)
	return context.WithValue(ctx, attemptKey{}, a)
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
