package idemhttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idemprint/idemprint/internal/problem"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// Options configures a [Middleware]. Exactly one of Tenant and
// SingleTenant must be set; every other zero value is a documented
// default.
type Options struct {
	// Tenant returns the tenant of a request (an account, the owner of its
	// API key), whose keys are kept apart from every other tenant's. When
	// it returns false the request is answered with a 400 problem
	// ([TypeTenantUnknown]) and not executed: there is no shared
	// anonymous tenant.
	Tenant func(r *http.Request) (tenant string, ok bool)
	// SingleTenant names the one tenant of a service that has only one:
	// every request is its. Set it instead of Tenant to say so.
	SingleTenant string
	// MaxRequestBody is the largest request body read, in bytes; 0 means
	// 1 MiB. A larger body is answered with a 413 problem and not
	// executed.
	MaxRequestBody int64
	// MaxResponseBody is the largest response body kept for replay, in
	// bytes; 0 means 1 MiB. A larger response is still sent in full, and
	// its request is completed as executed with its response not kept
	// ([policy.Rule.CompleteWithoutResponse]): retries get a problem that
	// says so, and never execute again.
	MaxResponseBody int64
	// Logger receives warnings and errors (store faults, completions
	// that were overtaken, panics) and, at debug level, every decision;
	// nil means slog.Default().
	Logger *slog.Logger
	// OnDecision, when set, is called once for every request a rule
	// governs, after it was answered, with what happened: for metrics. It
	// is called from the request's goroutine and must not block. The
	// Event is a copy the hook owns: it may keep it.
	OnDecision func(Event)
	// FailOpen, when true, runs the handler without idempotency when the
	// store fails. The default, false, fails closed: the request is
	// answered with a 503 problem and Retry-After, and never executed
	// unguarded.
	FailOpen bool
	// CompletionTimeout bounds the writing of a request's record after its
	// handler returned, retries included; it runs even when the client has
	// gone. 0 means 10 s. Each attempt has at most a third of the rule's
	// lease, so that a stuck one is retried while the lease still runs.
	CompletionTimeout time.Duration
	// StoreRetryAfter is the Retry-After, in whole seconds, of the 503
	// answered when the store fails; 0 means 1.
	StoreRetryAfter int
}

// Middleware enforces an idempotency policy on the requests of an HTTP
// handler. Create it with [New] and wrap handlers with [Middleware.Wrap].
//
// It is safe for concurrent use. Its policy can be replaced while it
// serves ([Middleware.SetPolicy]).
type Middleware struct {
	policy            atomic.Pointer[policy.Policy]
	store             store.Store
	local             bool // store is in this process: see inProcess
	tenant            func(*http.Request) (string, bool)
	maxRequest        int64
	maxResponse       int64
	log               *slog.Logger
	onDecision        func(Event)
	failOpen          bool
	completionTimeout time.Duration
	retryAfter        int

	waiting atomic.Int64
	// renewals is apart from the Middleware, which it does not point
	// to: its goroutine outlives the last request by many ticks, and
	// must not keep a Middleware that is no longer used, and its store,
	// from being collected.
	renewals *renewals
}

// ErrOptions reports invalid arguments to [New].
var ErrOptions = errors.New("idemhttp: invalid options")

// New returns a Middleware enforcing pol with the records in st. It is an
// error when pol or st is nil, when neither or both of Options.Tenant and
// Options.SingleTenant are set, or when a limit is negative.
//
// A store that wraps another (to measure it, say) may have a method
// Unwrap() store.Store that returns it: the middleware then knows a
// [store.InProcess] behind it (a [store.Memory]), whose calls need no
// deadline of their own.
func New(pol *policy.Policy, st store.Store, opts Options) (*Middleware, error) {
	switch {
	case pol == nil || st == nil:
		return nil, errors.Join(ErrOptions, errors.New("idemhttp: a policy and a store are required"))
	case (opts.Tenant == nil) == (opts.SingleTenant == ""):
		return nil, errors.Join(ErrOptions, errors.New("idemhttp: set exactly one of Tenant and SingleTenant"))
	case opts.MaxRequestBody < 0 || opts.MaxResponseBody < 0 || opts.CompletionTimeout < 0 || opts.StoreRetryAfter < 0:
		return nil, errors.Join(ErrOptions, errors.New("idemhttp: negative limit"))
	}
	m := &Middleware{
		store:             st,
		local:             inProcess(st),
		tenant:            opts.Tenant,
		maxRequest:        cmpOr(opts.MaxRequestBody, 1<<20),
		maxResponse:       cmpOr(opts.MaxResponseBody, 1<<20),
		log:               opts.Logger,
		onDecision:        opts.OnDecision,
		failOpen:          opts.FailOpen,
		completionTimeout: cmpOr(opts.CompletionTimeout, 10*time.Second),
		retryAfter:        cmpOr(opts.StoreRetryAfter, 1),
		renewals:          new(renewals),
	}
	if m.tenant == nil {
		single := opts.SingleTenant
		m.tenant = func(*http.Request) (string, bool) { return single, true }
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.policy.Store(pol)
	return m, nil
}

// inProcess reports whether st keeps its records in this process: a
// [store.InProcess] that says so, or a store that wraps one (to measure
// it, say) and says so with an Unwrap() store.Store method. Such a store
// reads neither deadlines nor context values and never blocks, so its
// calls need no context of their own.
func inProcess(st store.Store) bool {
	for range 8 { // a bound, in case a store unwraps to itself
		switch s := st.(type) {
		case store.InProcess:
			return s.InProcess()
		case interface{ Unwrap() store.Store }:
			st = s.Unwrap()
		default:
			return false
		}
	}
	return false
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// SetPolicy replaces the policy for the requests that arrive from now on;
// requests under way finish under the policy they started with. pol must
// not be nil.
func (m *Middleware) SetPolicy(pol *policy.Policy) {
	if pol != nil {
		m.policy.Store(pol)
	}
}

// Policy returns the policy in force.
func (m *Middleware) Policy() *policy.Policy { return m.policy.Load() }

// Stats are the middleware's gauges at one moment.
type Stats struct {
	// Executing is the number of requests whose handler runs under a
	// reservation.
	Executing int64
	// Waiting is the number of requests waiting for a reservation of their
	// key to complete.
	Waiting int64
}

// Stats returns the middleware's gauges now.
func (m *Middleware) Stats() Stats {
	// The executing requests are the holders of reservations: counting
	// them costs a request nothing more.
	return Stats{Executing: int64(m.renewals.len()), Waiting: m.waiting.Load()}
}

// exchange is the state of one governed request, recycled: the event
// reported to the hook (which gets a copy), the writer an executing
// handler writes to, the holder of its reservation and the buffer its
// body is read into. It goes back to the pool when the request is
// answered and no renewal of its reservation is under way (refs).
type exchange struct {
	ev     Event
	cw     capture
	claim  store.Claim // what the store gave the request
	h      holder
	body   []byte      // the request body's buffer
	reader *bodyReader // the body handed to the handler, emptied on release
	// bodyShared says that GetBody handed out readers of body, which may
	// outlive the request: body is then not reused.
	bodyShared atomic.Bool
	refs       atomic.Int32
	// timed says that the event's durations are read (by the hook or the
	// debug log): the clock is read for them only then.
	timed bool
}

var exchangePool = sync.Pool{New: func() any { return new(exchange) }}

// maxPooled keeps a pooled exchange from pinning a large buffer.
const maxPooled = 64 << 10

func getExchange(rule *policy.Rule) *exchange {
	x := exchangePool.Get().(*exchange)
	x.refs.Store(1)
	x.ev.Rule = rule
	return x
}

// release drops a reference to x, and recycles it when it was the last.
func (x *exchange) release() {
	if x.refs.Add(-1) != 0 {
		return
	}
	x.ev, x.timed = Event{}, false
	x.cw.reset()
	x.claim = store.Claim{}
	x.h = holder{}
	if x.reader != nil {
		// A handler that reads its body after it returned (net/http
		// forbids it) reads nothing, not a later request's body.
		x.reader.Reset(nil)
		x.reader = nil
	}
	shared := x.bodyShared.Load()
	if shared { // a store only when needed: it is a full barrier
		x.bodyShared.Store(false)
	}
	x.body = x.body[:0]
	if cap(x.body) > maxPooled || shared {
		x.body = nil
	}
	exchangePool.Put(x)
}

// Wrap returns a handler that enforces the policy on next: the shape of
// func(http.Handler) http.Handler. A request that no rule governs goes to
// next untouched.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rule, ok := m.policy.Load().Match(r.Method, r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		x := getExchange(rule)
		var start time.Time
		if x.timed = m.onDecision != nil || m.log.Enabled(r.Context(), slog.LevelDebug); x.timed {
			start = time.Now()
		}
		defer func() { // also when the handler panics
			if x.timed {
				x.ev.Duration = time.Since(start)
			}
			m.report(r.Context(), &x.ev)
			x.release()
		}()
		m.serve(w, r, next, rule, x)
	})
}

// serve runs the flow for a request that rule governs.
func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler, rule *policy.Rule, x *exchange) {
	ev := &x.ev
	tenant, ok := m.tenant(r)
	if !ok || tenant == "" {
		m.answerProblem(w, ev, Invalid, problemTenant())
		return
	}
	ev.Tenant = tenant

	var body []byte
	if hasHeader(r.Header, rule.KeyHeader()) { // without a key nothing is fingerprinted
		var p *problem.Details
		if body, p = m.readBody(r, x.body[:0]); p != nil {
			m.answerProblem(w, ev, Invalid, p)
			return
		}
		if body != nil {
			x.body = body // kept for the next request; the handler's until this one is answered
		}
	}
	fr, err := rule.Fingerprinter().HTTPRequest(r, body)
	var req policy.Request
	if err == nil {
		req, err = rule.NewRequest(tenant, fr)
	}
	if err != nil {
		m.answerProblem(w, ev, Invalid, problemRequest(body, err))
		return
	}
	ev.Fingerprint = req.Fingerprint
	if x.timed { // only a report reads it, for Event.KeyHash
		if pk, _, err := rule.StorageKeys(req); err == nil {
			ev.storageKey = pk
		}
	}

	c := &x.claim
	if err = m.acquire(r.Context(), rule, &req, x); err != nil {
		m.storeFailed(w, r, next, body, x, err)
		return
	}
	d := c.Decision
	ev.Action, ev.Reason = d.Action, d.Reason
	switch d.Action {
	case policy.Replay:
		ev.Outcome, ev.Status = Replayed, d.Response.Status
		writeResponse(w, &d.Response)
	case policy.Reject:
		ev.Outcome, ev.Status = Rejected, d.Response.Status
		writeResponse(w, &d.Response)
	case policy.PassThrough:
		ev.Outcome = PassedThrough
		ev.Status = m.run(w, r, next, body, x)
	default: // Execute, ExecuteAsNew
		m.execute(w, r, next, body, rule, c, x)
	}
}

// acquire runs store.Acquire into x.claim, and again while the key's
// reservation runs and the rule lets the request wait for it, polling
// with backoff and jitter. req and the claim go by pointer: they are some
// hundreds of bytes each.
func (m *Middleware) acquire(ctx context.Context, rule *policy.Rule, req *policy.Request, x *exchange) error {
	ev, c := &x.ev, &x.claim
	var start time.Time
	if x.timed {
		start = time.Now()
		defer func() { ev.StoreLatency += time.Since(start) - ev.Waited }()
	}
	var err error
	*c, err = store.Acquire(ctx, m.store, rule, *req)
	ev.StoreCalls += c.Calls
	wait := rule.Wait()
	if err != nil || wait <= 0 || !inFlight(c) {
		return err
	}
	if start.IsZero() {
		start = time.Now() // the wait's deadline runs from here
	}
	m.waiting.Add(1)
	defer m.waiting.Add(-1)
	deadline := start.Add(wait)
	backoff := 25 * time.Millisecond
	for err == nil && inFlight(c) {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		pause := min(jitter(backoff), left)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		ev.Waited += pause
		backoff = min(2*backoff, time.Second)
		*c, err = store.Acquire(ctx, m.store, rule, *req)
		ev.StoreCalls += c.Calls
	}
	return err
}

// inFlight reports whether the claim is a 409 for a running reservation.
func inFlight(c *store.Claim) bool {
	p := c.Decision.Problem
	return c.Decision.Action == policy.Reject && p != nil && p.Type == policy.TypeInFlight
}

// jitter returns a duration between d/2 and d.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d/2+1)
}

// execute runs the handler under the claim's reservation and completes
// its record.
func (m *Middleware) execute(w http.ResponseWriter, r *http.Request, next http.Handler, body []byte, rule *policy.Rule, c *store.Claim, x *exchange) {
	ev := &x.ev
	h := m.hold(r.Context(), rule, x)
	cw := &x.cw
	cw.init(w, m.maxResponse)
	defer func() {
		ev.StoreCalls += h.calls
		ev.StoreLatency += h.latency
	}()
	panicked := true
	defer func() {
		if !panicked {
			return
		}
		h.stop()
		if cw.disposition == dispositionHold {
			// The handler said its outcome is unknown, then aborted (a
			// proxy panics with http.ErrAbortHandler when the upstream
			// breaks off mid-response): the upstream may have executed,
			// so the reservation holds, as it would without the panic.
			ev.Outcome, ev.Status = Held, cw.status
			m.log.LogAttrs(r.Context(), slog.LevelWarn, "idemhttp: the request's outcome is unknown and its handler aborted; its reservation holds until its lease lapses",
				slog.String("rule", rule.Pointer()), slog.Int("status", cw.status))
			return
		}
		ev.Outcome, ev.Status = Panicked, cw.status
		if _, ev.Err = h.finish(rule.Release); ev.Err != nil {
			m.log.LogAttrs(r.Context(), slog.LevelError, "idemhttp: releasing the reservation of a panicking handler failed; it holds until its lease lapses",
				slog.String("rule", rule.Pointer()), slog.Any("error", ev.Err))
		}
		// The panic goes on to the server's recovery.
	}()
	x.setBody(r, body)
	next.ServeHTTP(cw, r)
	panicked = false

	h.stop()
	status := cw.status
	if status == 0 && !cw.hijacked {
		status = http.StatusOK // what net/http sends for a handler that wrote nothing
	}
	ev.Status = status
	if cw.disposition == dispositionHold {
		ev.Outcome = Held
		m.log.LogAttrs(r.Context(), slog.LevelWarn, "idemhttp: the request's outcome is unknown; its reservation holds until its lease lapses",
			slog.String("rule", rule.Pointer()), slog.Int("status", status))
		return
	}
	now := c.StoreTime()
	// The store may keep the body: give it its own copy of the pooled buffer.
	resp := policy.Response{Status: status, Header: cw.header, Body: bytes.Clone(cw.body)}
	rec, err := h.finish(func(res *policy.Record) (policy.Record, error) {
		switch {
		case cw.disposition == dispositionRelease:
			return rule.Release(res)
		case cw.hijacked:
			return rule.CompleteWithoutResponse(res, 0, 0, now)
		case cw.overflow:
			return rule.CompleteWithoutResponse(res, status, cw.size, now)
		}
		return rule.Complete(res, resp, now)
	})
	switch {
	case err == nil && rec.State == policy.StateNone:
		ev.Outcome = Released
	case err == nil && (cw.overflow || cw.hijacked):
		ev.Outcome = NotKept
	case err == nil:
		ev.Outcome = Stored
	case errors.Is(err, store.ErrConflict):
		ev.Outcome, ev.Err = Overtaken, err
		m.log.LogAttrs(r.Context(), slog.LevelWarn, "idemhttp: the reservation was taken over before its handler finished; its response was not stored",
			slog.String("rule", rule.Pointer()), slog.Int("status", status))
	default:
		ev.Outcome, ev.Err = CompletionFailed, err
		m.log.LogAttrs(r.Context(), slog.LevelError, "idemhttp: storing the record of an executed request failed; it holds until its lease lapses",
			slog.String("rule", rule.Pointer()), slog.Int("status", status), slog.Any("error", err))
	}
}

// storeFailed answers a request whose records could not be read or
// written: a 503 (or, for a record that cannot be used, a 500) problem,
// or the handler without idempotency when failing open.
func (m *Middleware) storeFailed(w http.ResponseWriter, r *http.Request, next http.Handler, body []byte, x *exchange, err error) {
	ev := &x.ev
	ev.Err = err
	if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		// The client left while the store was asked: nobody to answer.
		ev.Outcome = StoreFailed
		return
	}
	if m.failOpen && !errors.Is(err, store.ErrCorrupt) && !errors.Is(err, policy.ErrForeignRecord) {
		m.log.LogAttrs(r.Context(), slog.LevelWarn, "idemhttp: store failed; running the handler without idempotency (fail open)", slog.Any("error", err))
		ev.Outcome = FailedOpen
		ev.Status = m.run(w, r, next, body, x)
		return
	}
	ev.Outcome = StoreFailed
	p := problemUnavailable(m.retryAfter)
	if errors.Is(err, store.ErrCorrupt) || errors.Is(err, policy.ErrForeignRecord) || errors.Is(err, store.ErrInvalid) {
		p = problemStoreError()
	}
	m.log.LogAttrs(r.Context(), slog.LevelError, "idemhttp: store failed; the request was not executed", slog.Int("status", p.Status), slog.Any("error", err))
	ev.Status = p.Status
	problem.Write(w, p)
}

// run runs the handler without idempotency and returns the status it
// answered.
func (m *Middleware) run(w http.ResponseWriter, r *http.Request, next http.Handler, body []byte, x *exchange) int {
	if body != nil {
		x.setBody(r, body)
	}
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, r)
	if sw.status == 0 {
		return http.StatusOK
	}
	return sw.status
}

func (m *Middleware) answerProblem(w http.ResponseWriter, ev *Event, o Outcome, p *problem.Details) {
	ev.Outcome, ev.Status = o, p.Status
	problem.Write(w, p)
}

func (m *Middleware) report(ctx context.Context, ev *Event) {
	if m.log.Enabled(ctx, slog.LevelDebug) {
		m.log.LogAttrs(ctx, slog.LevelDebug, "idemhttp: request governed",
			slog.String("rule", ev.Rule.Pointer()), slog.String("key_hash", ev.KeyHash()),
			slog.String("action", ev.Action.String()), slog.String("outcome", ev.Outcome.String()),
			slog.Int("status", ev.Status), slog.Duration("duration", ev.Duration))
	}
	if m.onDecision != nil {
		m.onDecision(*ev)
	}
}

// readBody reads the whole request body, up to the limit, appending it to
// buf. It returns a problem for a body too large or that could not be
// read.
func (m *Middleware) readBody(r *http.Request, buf []byte) ([]byte, *problem.Details) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > m.maxRequest {
		return nil, problemTooLarge(m.maxRequest)
	}
	size := 512
	if r.ContentLength >= 0 {
		size = int(r.ContentLength) + 1 // +1: reading to EOF needs no growth
	}
	buf = slices.Grow(buf, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > m.maxRequest {
			return nil, problemTooLarge(m.maxRequest)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return nil, problemTooLarge(m.maxRequest)
			}
			return nil, &problem.Details{
				Type: TypeInvalidRequest, Title: "Request body unreadable", Status: http.StatusBadRequest,
				Detail: "The request body could not be read.", Part: "body",
			}
		}
	}
}

// setBody gives the handler the body the middleware read, byte for byte,
// and, as GetBody, a way to read it again from the start: a proxy can
// send that as a body net/http's transport knows is in memory, the header
// and the body in one write. (A request forwarded with GetBody set may be
// sent again by the transport after some failures; see
// [http.Request.GetBody].) Once GetBody was called, the buffer is not
// reused: its readers may outlive the handler, in a transport still
// writing.
func (x *exchange) setBody(r *http.Request, body []byte) {
	b := &bodyReader{x: x, body: body}
	b.Reset(body)
	x.reader = b
	r.Body = b
	r.ContentLength = int64(len(body))
	r.GetBody = b.again
}

// bodyReader is the request body handed to the handler.
type bodyReader struct {
	bytes.Reader
	x    *exchange
	body []byte
}

// again is the request's GetBody.
func (b *bodyReader) again() (io.ReadCloser, error) {
	b.x.bodyShared.Store(true)
	return io.NopCloser(bytes.NewReader(b.body)), nil
}

// Close implements io.Closer; there is nothing to release.
func (*bodyReader) Close() error { return nil }

// writeResponse answers with a stored response or a problem: its header
// value by value, its status and its body.
func writeResponse(w http.ResponseWriter, resp *policy.Response) {
	h := w.Header()
	for name, values := range resp.Header { // the decision's copy: no need to copy again
		h[name] = values
	}
	h["Content-Length"] = []string{strconv.Itoa(len(resp.Body))}
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
}

// hasHeader reports whether h has a value for name, whatever the case of
// the key it is stored under (as the engine reads the key header).
func hasHeader(h http.Header, name string) bool {
	if len(h[name]) > 0 {
		return true
	}
	for k, v := range h {
		if len(v) > 0 && strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// statusWriter records the status a handler answers.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 && status >= 200 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap returns the underlying ResponseWriter, for http.ResponseController.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush flushes the underlying ResponseWriter, for handlers that assert
// http.Flusher.
func (w *statusWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }
