package idemclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reply is one scripted answer of a test server; close drops the
// connection instead of answering, after reading the request.
type reply struct {
	status     int
	body       string
	retryAfter string
	close      bool
}

// script is a test server that answers its requests in order (the last
// reply repeats) and records what each carried.
type script struct {
	t       *testing.T
	replies []reply
	srv     *httptest.Server

	mu   sync.Mutex
	seen []seen
}

type seen struct {
	Method, Key, Body string
}

func newScript(t *testing.T, replies ...reply) *script {
	s := &script{t: t, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *script) handle(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, seen{r.Method, r.Header.Get("Idempotency-Key"), string(b)})
	rp := s.replies[min(len(s.seen), len(s.replies))-1]
	s.mu.Unlock()
	if rp.close {
		panic(http.ErrAbortHandler) // the connection is closed: no answer
	}
	if rp.retryAfter != "" {
		w.Header().Set("Retry-After", rp.retryAfter)
	}
	if strings.HasPrefix(rp.body, "{") {
		w.Header().Set("Content-Type", "application/problem+json")
	}
	w.WriteHeader(rp.status)
	io.WriteString(w, rp.body)
}

func (s *script) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.seen...)
}

// fast is Options that wait at most a millisecond between attempts.
func fast(o Options) Options {
	o.BaseDelay = cmpOr(o.BaseDelay, time.Millisecond)
	o.MaxDelay = cmpOr(o.MaxDelay, time.Millisecond)
	return o
}

func newTransport(t *testing.T, opts Options) *Transport {
	t.Helper()
	tr, err := New(nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func post(t *testing.T, ctx context.Context, tr http.RoundTripper, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return tr.RoundTrip(req)
}

const (
	pIdemprintInFlight    = `{"type":"https://idemprint.dev/problems/idempotency-key-in-flight","title":"Request with this idempotency key in progress","status":409}`
	pIdemprintReuse       = `{"type":"https://idemprint.dev/problems/idempotency-key-reuse","title":"Idempotency key reused with a different request","status":422,"differing_paths":["amountCents"]}`
	pIdemprintOtherRoute  = `{"type":"https://idemprint.dev/problems/idempotency-key-other-route","title":"Idempotency key used on another endpoint","status":422}`
	pIdemprintSpec        = `{"type":"https://idemprint.dev/problems/idempotency-spec-changed","title":"Idempotency key recorded under another fingerprint spec","status":409}`
	pIdemprintNotKept     = `{"type":"https://idemprint.dev/problems/idempotency-response-not-kept","title":"Response not kept","status":409}`
	pIdemprintStore       = `{"type":"https://idemprint.dev/problems/idempotency-store-unavailable","title":"Idempotency store unavailable","status":503}`
	pIdemprintUnknown     = `{"type":"https://idemprint.dev/problems/upstream-outcome-unknown","title":"Upstream outcome unknown","status":504}`
	pIdemprintReuse400    = `{"type":"https://idemprint.dev/problems/idempotency-key-reuse","title":"Idempotency key reused with a different request","status":400}`
	pIETFOutstanding      = `{"type":"https://developer.example.com/idempotency","title":"A request is outstanding for this Idempotency-Key","status":409}`
	pIETFUsed             = `{"type":"https://developer.example.com/idempotency","title":"Idempotency-Key is already used","status":422}`
	pValidation           = `{"type":"https://example.com/validation","title":"Amount must be positive","status":422}`
	pConflict             = `{"type":"https://example.com/conflict","title":"Order already shipped","status":409}`
	stripeInUse           = `{"error":{"type":"invalid_request_error","code":"idempotency_key_in_use","message":"There is currently another in-progress request using this Idempotent Key."}}`
	stripeIdempotencyErr  = `{"error":{"type":"idempotency_error","message":"Keys for idempotent requests can only be used with the same parameters they were first used with."}}`
	stripeInvalidRequest  = `{"error":{"type":"invalid_request_error","code":"parameter_missing","message":"Missing required param: amount."}}`
	created               = `{"id":"pay_1"}`
	okStatus              = http.StatusCreated
	statusServiceUnavail  = http.StatusServiceUnavailable
	statusConflict        = http.StatusConflict
	statusUnprocessable   = http.StatusUnprocessableEntity
	statusBadRequest      = http.StatusBadRequest
	statusTooManyRequests = http.StatusTooManyRequests
)

// TestRetryRules is every answer's verdict, by dialect: how many attempts
// an operation made and how it ended.
func TestRetryRules(t *testing.T) {
	ok := reply{status: okStatus, body: created}
	tests := []struct {
		name     string
		replies  []reply
		classify func(*http.Response, []byte) Verdict
		attempts int
		status   int   // of the answer returned
		err      error // or the error
		problem  string
		reason   string
	}{
		{name: "Status/201", replies: []reply{ok}, attempts: 1, status: 201},
		{name: "Status/429", replies: []reply{{status: statusTooManyRequests}, ok}, attempts: 2, status: 201},
		{name: "Status/502", replies: []reply{{status: 502}, ok}, attempts: 2, status: 201},
		{name: "Status/503", replies: []reply{{status: 503}, ok}, attempts: 2, status: 201},
		{name: "Status/504", replies: []reply{{status: 504}, ok}, attempts: 2, status: 201},
		{name: "Status/500", replies: []reply{{status: 500}, ok}, attempts: 1, status: 500, reason: "a 500 may have executed and is not an idempotency answer"},
		{name: "Status/400", replies: []reply{{status: 400}, ok}, attempts: 1, status: 400},
		{name: "Status/404", replies: []reply{{status: 404}, ok}, attempts: 1, status: 404},
		{name: "Status/409Bare", replies: []reply{{status: statusConflict}, ok}, attempts: 1, status: 409, reason: "a conflict that does not say it is in flight is the resource's"},
		{name: "Status/422Bare", replies: []reply{{status: statusUnprocessable}, ok}, attempts: 1, status: 422},
		{name: "Status/Exhausted", replies: []reply{{status: 503}}, attempts: DefaultMaxAttempts, status: 503, reason: "the last answer is returned"},
		{name: "Transport/Dropped", replies: []reply{{close: true}, {close: true}, ok}, attempts: 3, status: 201, reason: "the lost response: the key makes the retry safe"},
		{name: "Transport/Exhausted", replies: []reply{{close: true}}, attempts: DefaultMaxAttempts, err: io.EOF},

		{name: "Idemprint/InFlight", replies: []reply{{status: 409, body: pIdemprintInFlight, retryAfter: "0"}, ok}, attempts: 2, status: 201},
		{name: "Idemprint/KeyReuse", replies: []reply{{status: 422, body: pIdemprintReuse}, ok}, attempts: 1, err: ErrKeyReused, problem: "https://idemprint.dev/problems/idempotency-key-reuse"},
		{name: "Idemprint/KeyReuse400", replies: []reply{{status: 400, body: pIdemprintReuse400}, ok}, attempts: 1, err: ErrKeyReused, problem: "https://idemprint.dev/problems/idempotency-key-reuse", reason: "a rule may declare 400 for a mismatch"},
		{name: "Idemprint/OtherRoute", replies: []reply{{status: 422, body: pIdemprintOtherRoute}, ok}, attempts: 1, err: ErrKeyReused, problem: "https://idemprint.dev/problems/idempotency-key-other-route"},
		{name: "Idemprint/SpecChanged", replies: []reply{{status: 409, body: pIdemprintSpec}, ok}, attempts: 1, status: 409},
		{name: "Idemprint/ResponseNotKept", replies: []reply{{status: 409, body: pIdemprintNotKept}, ok}, attempts: 1, status: 409, reason: "it executed: never again"},
		{name: "Idemprint/StoreUnavailable", replies: []reply{{status: 503, body: pIdemprintStore, retryAfter: "0"}, ok}, attempts: 2, status: 201},
		{name: "Idemprint/OutcomeUnknown", replies: []reply{{status: 504, body: pIdemprintUnknown, retryAfter: "0"}, ok}, attempts: 2, status: 201},

		{name: "IETF/Outstanding", replies: []reply{{status: 409, body: pIETFOutstanding}, ok}, attempts: 2, status: 201},
		{name: "IETF/AlreadyUsed", replies: []reply{{status: 422, body: pIETFUsed}, ok}, attempts: 1, err: ErrKeyReused, problem: "https://developer.example.com/idempotency"},
		{name: "IETF/Validation422", replies: []reply{{status: 422, body: pValidation}, ok}, attempts: 1, status: 422, reason: "a 422 that does not name idempotency is a validation error"},
		{name: "IETF/Conflict409", replies: []reply{{status: 409, body: pConflict}, ok}, attempts: 1, status: 409},

		{name: "Stripe/KeyInUse", replies: []reply{{status: 409, body: stripeInUse}, ok}, attempts: 2, status: 201},
		{name: "Stripe/IdempotencyError", replies: []reply{{status: 400, body: stripeIdempotencyErr}, ok}, attempts: 1, err: ErrKeyReused},
		{name: "Stripe/InvalidRequest", replies: []reply{{status: 400, body: stripeInvalidRequest}, ok}, attempts: 1, status: 400},

		{name: "Classify/Retry", replies: []reply{{status: 418}, ok}, attempts: 2, status: 201,
			classify: func(r *http.Response, _ []byte) Verdict {
				if r.StatusCode == 418 {
					return InFlight
				}
				return Unknown
			}},
		{name: "Classify/KeyReused", replies: []reply{{status: 400, body: "key used"}, ok}, attempts: 1, err: ErrKeyReused,
			classify: func(_ *http.Response, b []byte) Verdict {
				if string(b) == "key used" {
					return KeyReused
				}
				return Unknown
			}},
		{name: "Classify/FinalOverridesDialect", replies: []reply{{status: 503}, ok}, attempts: 1, status: 503,
			classify: func(*http.Response, []byte) Verdict { return Final }},
		{name: "Classify/UnknownFallsBack", replies: []reply{{status: 409, body: pIdemprintInFlight}, ok}, attempts: 2, status: 201,
			classify: func(*http.Response, []byte) Verdict { return Unknown }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newScript(t, tc.replies...)
			tr := newTransport(t, fast(Options{Classify: tc.classify}))
			body := `{"amountCents":1000}`
			resp, err := post(t, context.Background(), tr, s.srv.URL, body)
			reqs := s.requests()
			if len(reqs) != tc.attempts {
				t.Errorf("%d attempts, want %d (%s)", len(reqs), tc.attempts, tc.reason)
			}
			for i, r := range reqs {
				if want := (seen{"POST", reqs[0].Key, body}); r != want || r.Key == "" {
					t.Errorf("attempt %d mismatch (-want +got):\n%s", i+1, cmp.Diff(want, r))
				}
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("err %T is not an *Error", err)
				}
				if e.Key != reqs[0].Key || e.Attempts != tc.attempts {
					t.Errorf("Error key %q attempts %d, want %q %d", e.Key, e.Attempts, reqs[0].Key, tc.attempts)
				}
				if tc.problem != "" && (e.Problem == nil || e.Problem.Type != tc.problem) {
					t.Errorf("Error.Problem = %+v, want type %s", e.Problem, tc.problem)
				}
				if resp != nil {
					t.Errorf("an answer with the error: %d", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			want := tc.replies[min(tc.attempts, len(tc.replies))-1]
			if resp.StatusCode != tc.status || string(b) != want.body {
				t.Errorf("answer %d %q, want %d %q", resp.StatusCode, b, tc.status, want.body)
			}
			if got := resp.Request.Header.Get(DefaultHeader); got != reqs[0].Key {
				t.Errorf("resp.Request carries key %q, want %q", got, reqs[0].Key)
			}
		})
	}
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewUUID(t *testing.T) {
	keys := map[string]bool{}
	for range 1000 {
		k, err := newUUID()
		if err != nil {
			t.Fatal(err)
		}
		if !uuidV4.MatchString(k) {
			t.Fatalf("newUUID() = %q, not a version 4 UUID", k)
		}
		if keys[k] {
			t.Fatalf("newUUID() repeated %q", k)
		}
		keys[k] = true
	}
}

// TestKeys is where an operation's key comes from and where the caller
// finds it.
func TestKeys(t *testing.T) {
	ok := reply{status: 201, body: created}
	t.Run("Minted", func(t *testing.T) {
		s := newScript(t, reply{status: 503}, ok)
		resp, err := post(t, context.Background(), newTransport(t, fast(Options{})), s.srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := s.requests()
		if !uuidV4.MatchString(reqs[0].Key) || reqs[1].Key != reqs[0].Key {
			t.Errorf("keys %q, %q: want one version 4 UUID", reqs[0].Key, reqs[1].Key)
		}
	})
	t.Run("OwnKeyKept", func(t *testing.T) {
		s := newScript(t, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, strings.NewReader("{}"))
		req.Header.Set("Idempotency-Key", "caller-key")
		resp, err := newTransport(t, Options{}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if k := s.requests()[0].Key; k != "caller-key" {
			t.Errorf("key %q, want caller-key", k)
		}
	})
	t.Run("RequestNotModified", func(t *testing.T) {
		s := newScript(t, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := newTransport(t, Options{}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if diff := cmp.Diff(http.Header{"Content-Type": {"application/json"}}, req.Header); diff != "" {
			t.Errorf("the caller's header changed (-want +got):\n%s", diff)
		}
	})
	t.Run("OtherHeader", func(t *testing.T) {
		var got string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = r.Header.Get("X-Request-Key")
		}))
		defer srv.Close()
		resp, err := post(t, context.Background(), newTransport(t, Options{Header: "x-request-key", NewKey: func() (string, error) { return "k1", nil }}), srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got != "k1" {
			t.Errorf("X-Request-Key %q, want k1", got)
		}
	})
	t.Run("NewKeyFails", func(t *testing.T) {
		s := newScript(t, ok)
		boom := errors.New("no entropy")
		_, err := post(t, context.Background(), newTransport(t, Options{NewKey: func() (string, error) { return "", boom }}), s.srv.URL, "{}")
		if !errors.Is(err, ErrKey) || !errors.Is(err, boom) {
			t.Errorf("err = %v, want ErrKey and its cause", err)
		}
		if n := len(s.requests()); n != 0 {
			t.Errorf("%d requests sent", n)
		}
	})
	t.Run("IdempotentMethodNoKey", func(t *testing.T) {
		s := newScript(t, reply{status: 503}, ok)
		req, _ := http.NewRequest("PUT", s.srv.URL, strings.NewReader("{}"))
		resp, err := newTransport(t, fast(Options{})).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reqs := s.requests()
		if len(reqs) != 2 || reqs[0].Key != "" {
			t.Errorf("requests %+v, want two without a key", reqs)
		}
	})
	t.Run("Operation", func(t *testing.T) {
		s := newScript(t, ok)
		tr := newTransport(t, Options{})
		op := &Operation{}
		resp, err := post(t, WithOperation(context.Background(), op), tr, s.srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if op.Key == "" || op.Key != s.requests()[0].Key || op.Started.IsZero() {
			t.Errorf("operation %+v after the request with key %q", op, s.requests()[0].Key)
		}
		// The same operation later: the same key.
		resp, err = post(t, WithOperation(context.Background(), op), tr, s.srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if k := s.requests()[1].Key; k != op.Key {
			t.Errorf("second call's key %q, want %q", k, op.Key)
		}
	})
	t.Run("NewOperation", func(t *testing.T) {
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		op, err := newTransport(t, Options{}).NewOperation(now)
		if err != nil {
			t.Fatal(err)
		}
		if !uuidV4.MatchString(op.Key) || !op.Started.Equal(now) {
			t.Errorf("NewOperation = %+v", op)
		}
	})
}

// TestKeyExpired: a key older than the retention is not sent, and an
// operation stops before a retry would be.
func TestKeyExpired(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t.Run("BeforeFirstAttempt", func(t *testing.T) {
		s := newScript(t, reply{status: 201})
		tr := newTransport(t, Options{Now: func() time.Time { return base }})
		op := &Operation{Key: "old", Started: base.Add(-DefaultRetention)}
		_, err := post(t, WithOperation(context.Background(), op), tr, s.srv.URL, "{}")
		if !errors.Is(err, ErrKeyExpired) {
			t.Errorf("err = %v, want ErrKeyExpired", err)
		}
		if n := len(s.requests()); n != 0 {
			t.Errorf("%d requests sent", n)
		}
	})
	t.Run("BeforeRetry", func(t *testing.T) {
		s := newScript(t, reply{status: 503}, reply{status: 201})
		var mu sync.Mutex
		now := base
		clock := func() time.Time { // each reading is an hour later
			mu.Lock()
			defer mu.Unlock()
			now = now.Add(time.Hour)
			return now
		}
		tr := newTransport(t, fast(Options{Now: clock, Retention: 30 * time.Minute}))
		_, err := post(t, context.Background(), tr, s.srv.URL, "{}")
		var e *Error
		if !errors.Is(err, ErrKeyExpired) || !errors.As(err, &e) || e.Attempts != 1 || e.Status != 503 {
			t.Errorf("err = %#v, want ErrKeyExpired after 1 attempt answered 503", err)
		}
		if n := len(s.requests()); n != 1 {
			t.Errorf("%d requests sent, want 1", n)
		}
	})
}

// TestBody: every attempt sends the same bytes; a body that cannot be
// held is refused before anything is sent.
func TestBody(t *testing.T) {
	ok := reply{status: 201}
	payload := `{"amountCents":1000,"currency":"EUR"}`
	t.Run("StreamReadOnce", func(t *testing.T) {
		s := newScript(t, reply{close: true}, reply{status: 503}, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, io.MultiReader(strings.NewReader(payload))) // no GetBody
		if req.GetBody != nil {
			t.Fatal("the test's body has GetBody")
		}
		resp, err := newTransport(t, fast(Options{})).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for i, r := range s.requests() {
			if r.Body != payload {
				t.Errorf("attempt %d sent %q, want %q", i+1, r.Body, payload)
			}
		}
	})
	t.Run("GetBodyFails", func(t *testing.T) {
		s := newScript(t, reply{status: 503}, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, strings.NewReader(payload))
		gone := errors.New("spooled file removed")
		req.GetBody = func() (io.ReadCloser, error) { return nil, gone }
		_, err := newTransport(t, fast(Options{})).RoundTrip(req)
		var e *Error
		if !errors.Is(err, ErrBodyNotReplayable) || !errors.Is(err, gone) || !errors.As(err, &e) || e.Attempts != 1 {
			t.Errorf("err = %v, want ErrBodyNotReplayable after 1 attempt", err)
		}
		if n := len(s.requests()); n != 1 {
			t.Errorf("%d requests sent, want 1", n)
		}
	})
	t.Run("TooLargeKnownLength", func(t *testing.T) {
		s := newScript(t, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, strings.NewReader(strings.Repeat("x", 101)))
		_, err := newTransport(t, Options{MaxBody: 100}).RoundTrip(req)
		if !errors.Is(err, ErrBodyTooLarge) {
			t.Errorf("err = %v, want ErrBodyTooLarge", err)
		}
		if n := len(s.requests()); n != 0 {
			t.Errorf("%d requests sent", n)
		}
	})
	t.Run("TooLargeStream", func(t *testing.T) {
		s := newScript(t, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, io.MultiReader(strings.NewReader(strings.Repeat("x", 101))))
		_, err := newTransport(t, Options{MaxBody: 100}).RoundTrip(req)
		if !errors.Is(err, ErrBodyTooLarge) {
			t.Errorf("err = %v, want ErrBodyTooLarge", err)
		}
		if n := len(s.requests()); n != 0 {
			t.Errorf("%d requests sent", n)
		}
	})
	t.Run("AtLimit", func(t *testing.T) {
		s := newScript(t, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, io.MultiReader(strings.NewReader(strings.Repeat("x", 100))))
		resp, err := newTransport(t, Options{MaxBody: 100}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	t.Run("ReadFails", func(t *testing.T) {
		s := newScript(t, ok)
		boom := errors.New("disk gone")
		req, _ := http.NewRequest("POST", s.srv.URL, io.MultiReader(strings.NewReader("{"), errReader{boom}))
		_, err := newTransport(t, Options{}).RoundTrip(req)
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want the read error", err)
		}
		if n := len(s.requests()); n != 0 {
			t.Errorf("%d requests sent", n)
		}
	})
	t.Run("ContentLengthShort", func(t *testing.T) {
		s := newScript(t, ok)
		req, _ := http.NewRequest("POST", s.srv.URL, io.MultiReader(strings.NewReader("{}")))
		req.ContentLength = 10
		_, err := newTransport(t, Options{}).RoundTrip(req)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
		}
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestWithoutKey: a request sent without a key on a method that is not
// idempotent is not retried once it may have been sent.
func TestWithoutKey(t *testing.T) {
	keyless := func(*http.Request) bool { return true }
	t.Run("Dropped", func(t *testing.T) {
		s := newScript(t, reply{close: true}, reply{status: 201})
		_, err := post(t, context.Background(), newTransport(t, fast(Options{Keyless: keyless})), s.srv.URL, "{}")
		if err == nil {
			t.Error("a keyless POST whose connection dropped was retried")
		}
		if reqs := s.requests(); len(reqs) != 1 || reqs[0].Key != "" {
			t.Errorf("requests %+v, want one without a key", reqs)
		}
	})
	t.Run("IdempotentMethodDropped", func(t *testing.T) {
		s := newScript(t, reply{close: true}, reply{status: 200})
		req, _ := http.NewRequest("GET", s.srv.URL, nil)
		resp, err := newTransport(t, fast(Options{})).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if reqs := s.requests(); len(reqs) != 2 || reqs[0].Key != "" {
			t.Errorf("requests %+v, want two without a key", reqs)
		}
	})
	t.Run("503", func(t *testing.T) {
		s := newScript(t, reply{status: 503}, reply{status: 201})
		resp, err := post(t, context.Background(), newTransport(t, fast(Options{Keyless: keyless})), s.srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 || len(s.requests()) != 1 {
			t.Errorf("%d after %d requests, want 503 after 1", resp.StatusCode, len(s.requests()))
		}
	})
	t.Run("NotConnected", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens: every dial is refused
		var attempts []Attempt
		tr := newTransport(t, fast(Options{Keyless: keyless, MaxAttempts: 3, OnAttempt: func(a Attempt) { attempts = append(attempts, a) }}))
		_, err = post(t, context.Background(), tr, "http://"+addr, "{}")
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			t.Errorf("err = %v, want the dial error", err)
		}
		if len(attempts) != 3 {
			t.Errorf("%d attempts, want 3: a request never sent may be sent again", len(attempts))
		}
	})
}

// TestRetryAfter parses the values of RFC 9110, section 10.2.3, with the
// time passed in.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"3", 3 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"99999999999999999999", 1<<63 - 1, true},
		{"Tue, 01 Dec 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Tuesday, 01-Dec-26 12:01:00 GMT", time.Minute, true},
		{"Tue Dec  1 12:00:05 2026", 5 * time.Second, true},
		{"Tue, 01 Dec 2026 11:00:00 GMT", 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, tc := range tests {
		d, ok := retryAfter(tc.in, now)
		if d != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tc.in, d, ok, tc.want, tc.ok)
		}
	}
}

// TestDelay is the backoff: capped exponential with full jitter, or the
// answer's Retry-After capped at MaxDelay.
func TestDelay(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var asked []int64
	highest := func(n int64) int64 { asked = append(asked, n); return n - 1 }
	tr := newTransport(t, Options{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second, Jitter: highest})
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, tr.delay(n, nil, now))
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delays mismatch (-want +got):\n%s", diff)
	}
	if asked[0] != int64(100*time.Millisecond)+1 {
		t.Errorf("jitter asked for [0, %d), want [0, 100ms]", asked[0])
	}
	huge := newTransport(t, Options{BaseDelay: time.Hour, MaxDelay: 1<<63 - 1, Jitter: highest})
	for n := 1; n <= 100; n += 33 {
		if d := huge.delay(n, nil, now); d < 0 {
			t.Errorf("delay(%d) with the largest MaxDelay = %v", n, d)
		}
	}
	tr.opts.Jitter = func(int64) int64 { return 0 }
	if d := tr.delay(3, nil, now); d != 0 {
		t.Errorf("delay with the lowest jitter = %v, want 0", d)
	}
	ra := func(v string) *http.Response { return &http.Response{Header: http.Header{"Retry-After": {v}}} }
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{
		{"0", 0}, {"1", time.Second}, {"3600", time.Second}, {"99999999999999999999", time.Second},
		{"Tue, 01 Dec 2026 12:00:00 GMT", 0}, {"junk", 0},
	} {
		if d := tr.delay(3, ra(tc.v), now); d != tc.want {
			t.Errorf("delay with Retry-After %q = %v, want %v", tc.v, d, tc.want)
		}
	}
}

// TestDeadline: an operation does not wait for an attempt that could not
// start before its context's deadline, and a wait ends when the context
// is cancelled.
func TestDeadline(t *testing.T) {
	t.Run("RetryAfterBeyondDeadline", func(t *testing.T) {
		s := newScript(t, reply{status: 503, retryAfter: "3600"}, reply{status: 201})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		resp, err := post(t, ctx, newTransport(t, Options{MaxDelay: time.Hour}), s.srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != 503 || took > time.Second {
			t.Errorf("%d after %v, want the 503 at once", resp.StatusCode, took)
		}
	})
	t.Run("RetryAfterBeyondMaxDelay", func(t *testing.T) {
		s := newScript(t, reply{status: 503, retryAfter: "3600"}, reply{status: 201})
		start := time.Now()
		resp, err := post(t, context.Background(), newTransport(t, Options{BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond}), s.srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != 201 || took < 50*time.Millisecond || took > 5*time.Second {
			t.Errorf("%d after %v, want 201 after the 50ms MaxDelay", resp.StatusCode, took)
		}
	})
	t.Run("RetryAfterDate", func(t *testing.T) {
		s := newScript(t, reply{status: 429, retryAfter: time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}, reply{status: 201})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := post(t, ctx, newTransport(t, Options{MaxDelay: time.Minute}), s.srv.URL, "{}")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 429 || len(s.requests()) != 1 {
			t.Errorf("%d after %d requests, want the 429 at once", resp.StatusCode, len(s.requests()))
		}
	})
	t.Run("TransportErrorNearDeadline", func(t *testing.T) {
		s := newScript(t, reply{close: true}, reply{status: 201})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		tr := newTransport(t, Options{BaseDelay: time.Hour, MaxDelay: time.Hour, Jitter: func(n int64) int64 { return n - 1 }})
		_, err := post(t, ctx, tr, s.srv.URL, "{}")
		var e *Error
		if !errors.As(err, &e) || e.Attempts != 1 || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the transport error of the 1 attempt", err)
		}
	})
	t.Run("CancelDuringWait", func(t *testing.T) {
		s := newScript(t, reply{status: 503, retryAfter: "10"}, reply{status: 201})
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		tr := newTransport(t, Options{MaxDelay: time.Minute, OnAttempt: func(a Attempt) {
			if a.Retry {
				once.Do(func() { time.AfterFunc(50*time.Millisecond, cancel) })
			}
		}})
		start := time.Now()
		_, err := post(t, ctx, tr, s.srv.URL, "{}")
		if took := time.Since(start); !errors.Is(err, context.Canceled) || took > 2*time.Second {
			t.Errorf("err = %v after %v, want context.Canceled at once", err, took)
		}
		if n := len(s.requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("CancelledDuringAttempt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			cancel()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		defer srv.Close()
		var n int
		_, err := post(t, ctx, newTransport(t, fast(Options{OnAttempt: func(Attempt) { n++ }})), srv.URL, "{}")
		if !errors.Is(err, context.Canceled) || n != 1 {
			t.Errorf("err = %v after %d attempts, want context.Canceled after 1", err, n)
		}
	})
}

// TestVisibility: the hook sees every attempt, and the logger every
// retry, at debug level.
func TestVisibility(t *testing.T) {
	s := newScript(t, reply{status: 503, retryAfter: "0"}, reply{status: 409, body: pIdemprintInFlight, retryAfter: "0"}, reply{status: 201})
	var got []Attempt
	var logs bytes.Buffer
	tr := newTransport(t, fast(Options{
		NewKey:    func() (string, error) { return "k-1", nil },
		OnAttempt: func(a Attempt) { got = append(got, a) },
		Logger:    slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	resp, err := post(t, context.Background(), tr, s.srv.URL, "{}")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := []Attempt{
		{N: 1, Key: "k-1", Status: 503, Verdict: Overloaded, Retry: true},
		{N: 2, Key: "k-1", Status: 409, Verdict: InFlight, Retry: true},
		{N: 3, Key: "k-1", Status: 201, Verdict: Final},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts mismatch (-want +got):\n%s", diff)
	}
	if n := strings.Count(logs.String(), "idemclient: retrying"); n != 2 {
		t.Errorf("%d retries logged, want 2:\n%s", n, logs.String())
	}
}

func TestNewOptions(t *testing.T) {
	for _, o := range []Options{
		{MaxBody: -1}, {MaxAttempts: -1}, {BaseDelay: -1}, {MaxDelay: -1}, {Retention: -1},
		{Header: "Bad Header"}, {BaseDelay: time.Minute, MaxDelay: time.Second}, {BaseDelay: time.Minute},
	} {
		if _, err := New(nil, o); !errors.Is(err, ErrOptions) {
			t.Errorf("New(%+v) = %v, want ErrOptions", o, err)
		}
	}
	if _, err := New(nil, Options{}); err != nil {
		t.Errorf("New with the zero Options: %v", err)
	}
}

func TestErrorMessage(t *testing.T) {
	e := &Error{Key: "k", Attempts: 1, Status: 422, Problem: &Problem{Type: "https://idemprint.dev/problems/idempotency-key-reuse"}, Err: ErrKeyReused}
	if got, want := e.Error(), "idemclient: idempotency key reused with another request (422 https://idemprint.dev/problems/idempotency-key-reuse)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := fmt.Sprint(Verdict(9)), "verdict(9)"; got != want {
		t.Errorf("Verdict(9) = %q, want %q", got, want)
	}
}

type idleCloser struct {
	stub
	closed bool
}

func (c *idleCloser) CloseIdleConnections() { c.closed = true }

func TestCloseIdleConnections(t *testing.T) {
	next := &idleCloser{}
	tr, err := New(next, Options{})
	if err != nil {
		t.Fatal(err)
	}
	(&http.Client{Transport: tr}).CloseIdleConnections()
	if !next.closed {
		t.Error("CloseIdleConnections did not reach the transport beneath")
	}
	tr, _ = New(stub{}, Options{}) // a transport without the method
	tr.CloseIdleConnections()
}
