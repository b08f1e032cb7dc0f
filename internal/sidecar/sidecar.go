package sidecar

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/internal/problem"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// Config configures a [Sidecar]. Upstream, Policy, Store and exactly one
// of TenantHeader and SingleTenant are required; every other zero value
// is a documented default.
type Config struct {
	// Upstream is the base URL requests are forwarded to, as
	// [httputil.ProxyRequest.SetURL] joins it with the request's path.
	Upstream *url.URL
	// Policy is the policy enforced until [Sidecar.SetPolicy] replaces it.
	Policy *policy.Policy
	// Store keeps the records; instances that share it exclude each other.
	Store store.Store
	// TenantHeader names the header that carries a request's tenant. A
	// request without it, or with it repeated, is answered 400
	// ([idemhttp.TypeTenantUnknown]) and not forwarded.
	TenantHeader string
	// SingleTenant names the one tenant of an upstream that has only one.
	SingleTenant string
	// Proxy configures the connection to the upstream.
	Proxy ProxyOptions
	// MaxRequestBody and MaxResponseBody are the middleware's limits
	// ([idemhttp.Options]); 0 means 1 MiB each.
	MaxRequestBody, MaxResponseBody int64
	// Logger receives the request log (one line at info level per request
	// a rule governs) and every warning; nil discards everything.
	Logger *slog.Logger
	// Registry, when set, receives the sidecar's metrics (see [Metrics]).
	// A registry takes the metrics of one Sidecar only.
	Registry prometheus.Registerer
}

// Sidecar is an idempotency-enforcing reverse proxy to one upstream. It is
// an [http.Handler]; create it with [New].
//
// It is safe for concurrent use, and its policy can be replaced while it
// serves.
type Sidecar struct {
	mw      *idemhttp.Middleware
	proxy   *httputil.ReverseProxy
	handler http.Handler
	log     *slog.Logger
	metrics *metrics // nil without a registry
}

// ErrConfig reports an invalid [Config].
var ErrConfig = errors.New("sidecar: invalid configuration")

// New returns a Sidecar forwarding to cfg.Upstream under cfg.Policy.
func New(cfg Config) (*Sidecar, error) {
	switch {
	case cfg.Upstream == nil || cfg.Upstream.Scheme != "http" && cfg.Upstream.Scheme != "https" || cfg.Upstream.Host == "":
		return nil, errors.Join(ErrConfig, errors.New("sidecar: the upstream must be an http or https URL with a host"))
	case (cfg.TenantHeader == "") == (cfg.SingleTenant == ""):
		return nil, errors.Join(ErrConfig, errors.New("sidecar: set exactly one of TenantHeader and SingleTenant"))
	}
	s := &Sidecar{log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	st := cfg.Store
	if cfg.Registry != nil {
		s.metrics = newMetrics()
		if st != nil {
			st = &measuredStore{Store: st, m: s.metrics}
		}
	}
	opts := idemhttp.Options{
		SingleTenant:    cfg.SingleTenant,
		MaxRequestBody:  cfg.MaxRequestBody,
		MaxResponseBody: cfg.MaxResponseBody,
		Logger:          s.log,
		OnDecision:      s.decided,
	}
	if name := cfg.TenantHeader; name != "" {
		opts.Tenant = func(r *http.Request) (string, bool) {
			v := r.Header.Values(name)
			return firstOf(v), len(v) == 1 && v[0] != ""
		}
	}
	mw, err := idemhttp.New(cfg.Policy, st, opts)
	if err != nil {
		return nil, errors.Join(ErrConfig, err)
	}
	s.mw = mw
	upstream := cfg.Upstream
	s.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.SetXForwarded()
			hideReplayable(pr.Out.Header)
			bodyInMemory(pr.Out)
		},
		Transport:    NewTransport(cfg.Proxy),
		BufferPool:   &buffers,
		ErrorHandler: s.upstreamFailed,
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.handler = mw.Wrap(http.HandlerFunc(s.forward))
	if s.metrics != nil {
		if err := s.metrics.register(cfg.Registry, mw); err != nil {
			return nil, errors.Join(ErrConfig, err)
		}
	}
	return s, nil
}

func firstOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// SetPolicy replaces the policy for the requests that arrive from now on.
func (s *Sidecar) SetPolicy(p *policy.Policy) { s.mw.SetPolicy(p) }

// Policy returns the policy in force.
func (s *Sidecar) Policy() *policy.Policy { return s.mw.Policy() }

// Stats returns the middleware's gauges.
func (s *Sidecar) Stats() idemhttp.Stats { return s.mw.Stats() }

// ServeHTTP enforces the policy and forwards what executes, or passes
// through, to the upstream.
func (s *Sidecar) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.metrics != nil {
		s.metrics.inFlight.Inc()
		defer s.metrics.inFlight.Dec()
	}
	s.handler.ServeHTTP(w, r)
}

// forward sends the request to the upstream, traced so that a failure
// can be placed before or after the request was sent.
func (s *Sidecar) forward(w http.ResponseWriter, r *http.Request) {
	ctx := withAttempt(r.Context())
	defer func() {
		if p := recover(); p != nil {
			// ReverseProxy aborts with http.ErrAbortHandler when the
			// upstream breaks off mid-response (or stays silent too
			// long): the upstream executed, whatever it answered.
			if p == http.ErrAbortHandler && idemhttp.HoldReservation(w) {
				s.upstreamError(ctx, kindAborted, r, nil)
			}
			panic(p)
		}
	}()
	s.proxy.ServeHTTP(w, r.WithContext(ctx))
}

// upstreamFailed is the proxy's ErrorHandler: the upstream could not be
// reached or gave no response. See the package documentation.
func (s *Sidecar) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	if !maybeSent(r.Context()) {
		idemhttp.ReleaseReservation(w)
		s.upstreamError(r.Context(), kindUnreachable, r, err)
		problem.Write(w, &problem.Details{
			Type:   TypeUpstreamUnreachable,
			Title:  "Upstream unreachable",
			Status: http.StatusBadGateway,
			Detail: "The request was not executed: it could not be sent to the upstream. Retry with the same key.",
		})
		return
	}
	idemhttp.HoldReservation(w)
	s.upstreamError(r.Context(), kindUnknown, r, err)
	retryAfter := 0
	if rule, ok := s.mw.Policy().Match(r.Method, r.URL.Path); ok {
		retryAfter = int((rule.Lease() + 999_999_999) / 1_000_000_000) // whole seconds, rounded up
	}
	problem.Write(w, &problem.Details{
		Type:       TypeUpstreamOutcomeUnknown,
		Title:      "Upstream outcome unknown",
		Status:     http.StatusGatewayTimeout,
		Detail:     "The request was sent to the upstream, which gave no complete answer: it may have executed. Its idempotency key stays reserved until its lease lapses; a retry with the same key is answered 409 until then.",
		RetryAfter: retryAfter,
	})
}

// upstreamError logs and counts an upstream failure.
func (s *Sidecar) upstreamError(ctx context.Context, kind string, r *http.Request, err error) {
	if s.metrics != nil {
		s.metrics.upstreamErrors.WithLabelValues(kind).Inc()
	}
	msg := "upstream unreachable; the request was not sent"
	switch kind {
	case kindUnknown:
		msg = "upstream failed after the request was sent; its outcome is unknown"
	case kindAborted:
		msg = "upstream broke off its response; the request executed"
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path)}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
}

// The kinds of upstream failure, as the metrics label them.
const (
	kindUnreachable = "unreachable"     // never sent: 502, released
	kindUnknown     = "outcome-unknown" // sent, no response: 504, held
	kindAborted     = "aborted"         // sent, response cut off: held
)

// decided is the middleware's OnDecision hook: the request log and the
// metrics.
func (s *Sidecar) decided(ev idemhttp.Event) {
	if s.metrics != nil {
		s.metrics.decided(ev)
	}
	if !s.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	attrs := []slog.Attr{
		slog.String("key_hash", ev.KeyHash()),
		slog.String("tenant", ev.Tenant),
		slog.String("rule", ev.Rule.Pointer()),
		slog.String("route", ev.Rule.Route()),
		slog.String("action", ev.Action.String()),
		slog.String("reason", ev.Reason.String()),
		slog.String("outcome", ev.Outcome.String()),
		slog.Int("status", ev.Status),
		slog.String("fingerprint", ev.Fingerprint.String()),
		slog.Duration("latency", ev.Duration),
		slog.Duration("store_latency", ev.StoreLatency),
		slog.Int("store_calls", ev.StoreCalls),
	}
	if ev.Waited > 0 {
		attrs = append(attrs, slog.Duration("waited", ev.Waited))
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.String("error", ev.Err.Error()))
	}
	s.log.LogAttrs(context.Background(), slog.LevelInfo, "request", attrs...)
}

// hideReplayable moves the headers that make net/http's transport replay
// a request without a body on its own (Idempotency-Key,
// X-Idempotency-Key) to their lower-case map keys: the same header on the
// wire, unseen by the transport. See the package documentation.
func hideReplayable(h http.Header) {
	for _, name := range [...][2]string{{"Idempotency-Key", "idempotency-key"}, {"X-Idempotency-Key", "x-idempotency-key"}} {
		if v, ok := h[name[0]]; ok {
			delete(h, name[0])
			h[name[1]] = v
		}
	}
}

// bodyInMemory replaces the body of out, which the proxy wraps in a reader
// of its own, with a new copy from GetBody: the middleware's, over the
// bytes it read. net/http's transport writes a body it knows to be in
// memory together with the header, in one write to the upstream instead
// of two. GetBody is then cleared: with it, the transport would send the
// request again after failures that do not prove the upstream never
// executed it (an HTTP/2 stream reset with PROTOCOL_ERROR), behind the
// middleware's back; see the package documentation.
func bodyInMemory(out *http.Request) {
	if out.Body != nil && out.GetBody != nil {
		if b, err := out.GetBody(); err == nil {
			out.Body = b
		}
	}
	out.GetBody = nil
}
