package idemclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idemprint/idemprint/internal/httpsyntax"
)

// Options configures a [Transport]. The zero value is a useful
// configuration: every zero field is a documented default.
type Options struct {
	// Header is the name of the key header; "" means Idempotency-Key.
	Header string
	// NewKey mints a key for an operation; nil means a random (version
	// 4) UUID in its text form, from crypto/rand. It must be safe for
	// concurrent use, and a key it returns must be unique to one
	// operation.
	NewKey func() (string, error)
	// Keyless, when set, reports whether a request that carries no key is
	// sent without one. nil mints a key for every request whose method is
	// not idempotent (RFC 9110, section 9.2.2: POST, PATCH, CONNECT and
	// methods it does not define). A request sent without a key on such a
	// method is never retried once it may have reached the server.
	Keyless func(r *http.Request) bool
	// MaxBody is the largest request body, in bytes, that an operation
	// holds to send again; 0 means 1 MiB. A larger body is refused with
	// [ErrBodyTooLarge] before anything is sent (except for a request
	// sent without a key on a method that is not idempotent, which is
	// sent once as it is).
	MaxBody int64
	// MaxAttempts is the most attempts of one operation; 0 means 5.
	MaxAttempts int
	// BaseDelay is the largest wait before the second attempt; each later
	// one doubles it, up to MaxDelay. 0 means 100 ms.
	BaseDelay time.Duration
	// MaxDelay caps every wait, a Retry-After's included; 0 means 10 s.
	MaxDelay time.Duration
	// Retention is how long after its operation started a key is still
	// retried: it must be shorter than the time the server keeps keys.
	// 0 means 23 h (a server's common 24 h, less a margin for clocks and
	// queues).
	Retention time.Duration
	// Classify, when set, reads answers with a status of 400 or more
	// before the built-in dialects: body holds the first bytes of the
	// answer (up to 64 KiB); a verdict of [Unknown] leaves the answer to
	// the dialects. It must be safe for concurrent use and must not read
	// resp.Body.
	Classify func(resp *http.Response, body []byte) Verdict
	// OnAttempt, when set, is called after every attempt, from the
	// goroutine of the request, with what happened: for logs and metrics.
	// It must not block.
	OnAttempt func(Attempt)
	// Logger receives, at debug level, every retry and every operation
	// that stops without an answer; nil means slog.Default().
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
	// Jitter returns a random number in [0, n) for n > 0; nil means
	// math/rand/v2's Int64N. Tests set it. It must be safe for
	// concurrent use.
	Jitter func(n int64) int64
}

// ErrOptions: an [Options] field is invalid; [New] says which.
var ErrOptions = errors.New("invalid options")

// Defaults of [Options].
const (
	DefaultHeader      = "Idempotency-Key"
	DefaultMaxBody     = 1 << 20
	DefaultMaxAttempts = 5
	DefaultBaseDelay   = 100 * time.Millisecond
	DefaultMaxDelay    = 10 * time.Second
	DefaultRetention   = 23 * time.Hour
)

// peekLimit is how much of an error answer's body is read to classify it.
const peekLimit = 64 << 10

// Attempt is what one attempt of an operation did, for [Options].OnAttempt.
type Attempt struct {
	// N is the attempt's number, 1 for the first.
	N int
	// Key is the operation's key; empty for a request sent without one.
	Key string
	// Status is the answer's status; 0 after a transport error.
	Status int
	// Err is the transport error; nil when there was an answer.
	Err error
	// Verdict is what the answer meant; [Unknown] after a transport error
	// and for an answer below 400.
	Verdict Verdict
	// Retry reports whether another attempt follows, after Delay.
	Retry bool
	Delay time.Duration
}

// Transport is an [http.RoundTripper] that gives each request an
// idempotency key and retries it with that key and the same bytes. Create
// it with [New].
//
// It is safe for concurrent use.
type Transport struct {
	next   http.RoundTripper
	opts   Options
	header string
	log    *slog.Logger
}

// New returns a Transport that sends attempts through next
// (http.DefaultTransport when nil). It returns an error wrapping
// [ErrOptions] for a negative limit or delay, a BaseDelay above MaxDelay,
// or a header name that is not a token.
func New(next http.RoundTripper, opts Options) (*Transport, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	bad := func(what string) error { return fmt.Errorf("idemclient: %w: %s", ErrOptions, what) }
	switch {
	case opts.MaxBody < 0:
		return nil, bad("MaxBody is negative")
	case opts.MaxAttempts < 0:
		return nil, bad("MaxAttempts is negative")
	case opts.BaseDelay < 0 || opts.MaxDelay < 0:
		return nil, bad("a delay is negative")
	case opts.Retention < 0:
		return nil, bad("Retention is negative")
	case opts.Header != "" && !httpsyntax.IsToken(opts.Header):
		return nil, bad("Header " + strconv.Quote(opts.Header) + " is not a header name")
	}
	opts.Header = http.CanonicalHeaderKey(cmpOr(opts.Header, DefaultHeader))
	opts.MaxBody = cmpOr(opts.MaxBody, DefaultMaxBody)
	opts.MaxAttempts = cmpOr(opts.MaxAttempts, DefaultMaxAttempts)
	opts.BaseDelay = cmpOr(opts.BaseDelay, DefaultBaseDelay)
	opts.MaxDelay = cmpOr(opts.MaxDelay, DefaultMaxDelay)
	opts.Retention = cmpOr(opts.Retention, DefaultRetention)
	if opts.BaseDelay > opts.MaxDelay {
		return nil, bad("BaseDelay is above MaxDelay")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Jitter == nil {
		opts.Jitter = rand.Int64N
	}
	return &Transport{next: next, opts: opts, header: opts.Header, log: cmpOr(opts.Logger, slog.Default())}, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// RoundTrip sends req as one operation: with its key (the request's own,
// its context's [Operation]'s, or a new one), again after an answer or
// error that allows a retry, until an answer is final, the attempts run
// out, the next attempt could not start before the context's deadline,
// or the key is too old. It returns the last answer, or an [*Error]:
// [ErrKeyReused], [ErrKeyExpired], [ErrBodyTooLarge],
// [ErrBodyNotReplayable], or the last transport error. It does not modify
// req, and closes its body.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	now := t.opts.Now()
	op := operationFrom(ctx)
	key := req.Header.Get(t.header)
	addKey := false
	if key == "" {
		switch {
		case op != nil && op.Key != "":
			key, addKey = op.Key, true
		case !idempotent(req.Method) && (t.opts.Keyless == nil || !t.opts.Keyless(req)):
			k, err := t.mint()
			if err != nil {
				closeBody(req)
				return nil, err
			}
			key, addKey = k, true
		}
	}
	started := now
	if op != nil {
		if op.Key == "" {
			op.Key = key
		}
		if op.Started.IsZero() {
			op.Started = now
		}
		started = op.Started
	}
	if key != "" && now.Sub(started) >= t.opts.Retention {
		closeBody(req)
		return nil, &Error{Key: key, Err: ErrKeyExpired}
	}
	if key == "" && !idempotent(req.Method) {
		return t.sendOnce(req)
	}

	// The first attempt's request: the caller's, with the key added and
	// its body held for the next ones.
	first := new(http.Request)
	*first = *req
	if addKey {
		// A new map over the caller's value slices, which nothing below
		// modifies: the caller's header is not changed.
		h := make(http.Header, len(req.Header)+1)
		for k, vs := range req.Header {
			h[k] = vs
		}
		h[t.header] = []string{key}
		first.Header = h
	}
	body, err := t.holdBody(first)
	if err != nil {
		closeBody(req)
		return nil, &Error{Key: key, Err: err}
	}
	att := first
	for n := 1; ; n++ {
		resp, err := t.next.RoundTrip(att)
		a := Attempt{N: n, Key: key}
		var peek []byte
		if err == nil {
			a.Status = resp.StatusCode
			if resp.StatusCode >= 400 {
				peek, err = peekBody(resp)
				if err == nil {
					a.Verdict = t.classify(resp, peek)
				} else {
					resp = nil
				}
			} else {
				a.Verdict = Final
			}
		}
		a.Err = err
		if err == nil && a.Verdict == KeyReused {
			t.report(a)
			closeResp(resp)
			e := &Error{Key: key, Attempts: n, Status: a.Status, Body: peek, Err: ErrKeyReused}
			if p, ok := parseAnswer(peek); ok && p.Problem != (Problem{}) {
				e.Problem = &p.Problem
			}
			t.log.DebugContext(ctx, "idemclient: key reused", "key", key, "attempt", n, "status", a.Status)
			return nil, e
		}
		retry := err == nil && (a.Verdict == InFlight || a.Verdict == Overloaded) ||
			err != nil && ctx.Err() == nil
		var stop error // why a retry that was allowed is not made
		if retry {
			now = t.opts.Now()
			a.Delay = t.delay(n, resp, now)
			switch dl, ok := ctx.Deadline(); {
			case n >= t.opts.MaxAttempts:
				retry = false
			case key != "" && now.Add(a.Delay).Sub(started) >= t.opts.Retention:
				retry, stop = false, ErrKeyExpired
			case ok && !now.Add(a.Delay).Before(dl):
				retry = false // the next attempt could not start in time
			}
		}
		a.Retry = retry
		if !retry {
			a.Delay = 0
		}
		t.report(a)
		if !retry {
			if stop != nil {
				closeResp(resp)
				t.log.DebugContext(ctx, "idemclient: key too old to retry", "key", key, "attempt", n)
				return nil, &Error{Key: key, Attempts: n, Status: a.Status, Body: peek, Err: stop}
			}
			if err != nil {
				t.log.DebugContext(ctx, "idemclient: no answer", "key", key, "attempts", n, "err", err)
				return nil, &Error{Key: key, Attempts: n, Err: err}
			}
			if peek != nil {
				resp.Body = &peeked{Reader: io.MultiReader(bytes.NewReader(peek), resp.Body), c: resp.Body}
			}
			return resp, nil
		}
		closeResp(resp)
		t.log.DebugContext(ctx, "idemclient: retrying", "key", key, "attempt", n, "status", a.Status, "err", err, "delay", a.Delay)
		if werr := wait(ctx, a.Delay); werr != nil {
			return nil, &Error{Key: key, Attempts: n, Status: a.Status, Err: werr}
		}
		if att, err = again(first, body); err != nil {
			return nil, &Error{Key: key, Attempts: n, Status: a.Status, Err: err}
		}
	}
}

// sendOnce sends a request that has no key on a method that is not
// idempotent: once, or again only when its connection could not be
// opened and its body can be sent again.
func (t *Transport) sendOnce(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	att := req
	for n := 1; ; n++ {
		resp, err := t.next.RoundTrip(att)
		a := Attempt{N: n, Err: err}
		if err == nil {
			a.Status, a.Verdict = resp.StatusCode, Final
		}
		replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
		a.Retry = err != nil && notSent(err) && replayable && ctx.Err() == nil && n < t.opts.MaxAttempts
		if a.Retry {
			a.Delay = t.delay(n, nil, t.opts.Now())
			if dl, ok := ctx.Deadline(); ok && !t.opts.Now().Add(a.Delay).Before(dl) {
				a.Retry, a.Delay = false, 0
			}
		}
		t.report(a)
		if !a.Retry {
			if err != nil {
				return nil, &Error{Attempts: n, Err: err}
			}
			return resp, nil
		}
		if werr := wait(ctx, a.Delay); werr != nil {
			return nil, &Error{Attempts: n, Err: werr}
		}
		if att, err = again(req, nil); err != nil {
			return nil, &Error{Attempts: n, Err: err}
		}
	}
}

// CloseIdleConnections closes the idle connections of the transport
// beneath, when it has a CloseIdleConnections method (as
// [http.Transport] has), so that [http.Client.CloseIdleConnections]
// reaches it.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// notSent reports whether err says the connection could not be opened,
// so no byte of the request reached the server.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (t *Transport) report(a Attempt) {
	if t.opts.OnAttempt != nil {
		t.opts.OnAttempt(a)
	}
}

func (t *Transport) classify(resp *http.Response, peek []byte) Verdict {
	if t.opts.Classify != nil {
		if v := t.opts.Classify(resp, peek); v != Unknown {
			return v
		}
	}
	a, ok := parseAnswer(peek)
	return classify(resp.StatusCode, a, ok)
}

// holdBody makes r's body one that can be sent again: r's own with its
// GetBody when it has one and a known length, or its bytes read once. It
// returns the bytes it read (nil when GetBody sends them again).
func (t *Transport) holdBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if r.ContentLength > t.opts.MaxBody {
		return nil, ErrBodyTooLarge
	}
	if r.GetBody != nil && r.ContentLength >= 0 {
		return nil, nil
	}
	var b []byte
	var err error
	if r.ContentLength > 0 {
		b = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, b)
		if err == nil {
			var one [1]byte
			if n, _ := r.Body.Read(one[:]); n > 0 {
				err = errors.New("request body longer than its ContentLength")
			}
		}
	} else {
		b, err = io.ReadAll(io.LimitReader(r.Body, t.opts.MaxBody+1))
		if err == nil && int64(len(b)) > t.opts.MaxBody {
			err = ErrBodyTooLarge
		}
	}
	r.Body.Close()
	if err != nil {
		if errors.Is(err, ErrBodyTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("reading the request body: %w", err)
	}
	r.ContentLength = int64(len(b))
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	if len(b) == 0 {
		r.Body, r.GetBody = http.NoBody, nil
	}
	return b, nil
}

// again returns the request of a next attempt: first with a new reader
// of the same body.
func again(first *http.Request, body []byte) (*http.Request, error) {
	r := new(http.Request)
	*r = *first
	switch {
	case body != nil:
		r.Body = io.NopCloser(bytes.NewReader(body))
	case first.GetBody != nil:
		b, err := first.GetBody()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBodyNotReplayable, err)
		}
		r.Body = b
	}
	return r, nil
}

// delay is the wait before the attempt after attempt n, whose answer was
// resp (nil after a transport error), at now.
func (t *Transport) delay(n int, resp *http.Response, now time.Time) time.Duration {
	if resp != nil {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
			return min(d, t.opts.MaxDelay)
		}
	}
	ceil := t.opts.BaseDelay
	for i := 1; i < n && ceil < t.opts.MaxDelay; i++ {
		if ceil > t.opts.MaxDelay/2 {
			ceil = t.opts.MaxDelay
			break
		}
		ceil *= 2
	}
	ceil = min(ceil, t.opts.MaxDelay)
	if ceil == 0 {
		return 0
	}
	if ceil < 1<<63-1 {
		ceil++ // the wait is in [0, ceil]
	}
	return time.Duration(t.opts.Jitter(int64(ceil)))
}

// retryAfter parses a Retry-After value (RFC 9110, section 10.2.3):
// delay-seconds or an HTTP date, as a wait from now (0 for a date past).
// A number of seconds too large for a Duration is the largest Duration.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return 0, false
			}
		}
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil || s > int64(1<<63-1)/int64(time.Second) {
			return 1<<63 - 1, true
		}
		return time.Duration(s) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

// wait waits d, or until ctx is done.
func wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return context.Cause(ctx)
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-tm.C:
		return nil
	}
}

// idempotent reports whether RFC 9110 (section 9.2.2) defines method as
// idempotent.
func idempotent(method string) bool {
	switch method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace,
		http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// peekBody reads the first bytes of an answer's body, to classify it.
func peekBody(resp *http.Response) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, peekLimit))
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// peeked is an answer's body whose first bytes were read.
type peeked struct {
	io.Reader
	c io.Closer
}

func (p *peeked) Close() error { return p.c.Close() }

// closeResp drains a little of an answer's body, so that its connection
// can be reused, and closes it.
func closeResp(resp *http.Response) {
	if resp == nil {
		return
	}
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		r.Body.Close()
	}
}

func errorsJoin(sentinel, cause error) error {
	if cause == nil {
		return sentinel
	}
	return fmt.Errorf("%w: %w", sentinel, cause)
}
