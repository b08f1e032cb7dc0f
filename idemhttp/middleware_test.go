package idemhttp_test

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
)

const firstPayment = `{"orderId":"ord_8842","amountCents":1000,"currency":"EUR","traceId":"t-1"}`

// The scenario this project exists for, on every backend.
func TestPaymentScenario(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			a := newApp(t, b.new(t), paymentsPolicy, idemhttp.Options{})
			first := a.send("acme", "abc-123", firstPayment)
			if first.Code != 201 {
				t.Fatalf("first request: %d %s, want 201", first.Code, first.Body)
			}
			if ev := a.lastEvent(); ev.Outcome != idemhttp.Stored || ev.Action != policy.Execute || ev.StoreCalls != 2 {
				t.Errorf("first request event = %v %v in %d store calls, want stored execute in 2", ev.Outcome, ev.Action, ev.StoreCalls)
			}

			// The same payment, re-spelled: members reordered, 1000.0, escapes,
			// whitespace and a new trace ID.
			retry := a.send("acme", "abc-123", "{ \"currency\" : \"\\u0045UR\", \"traceId\": \"t-2\",\n \"amountCents\": 1000.0, \"orderId\":\"ord_8842\" }")
			if retry.Code != 201 || retry.Body.String() != first.Body.String() {
				t.Errorf("retry = %d %s, want the first answer replayed byte for byte: 201 %s", retry.Code, retry.Body, first.Body)
			}
			if got := retry.Header().Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("retry's Idempotent-Replayed = %q, want true", got)
			}
			if diff := cmp.Diff(first.Header()["Link"], retry.Header()["Link"]); diff != "" {
				t.Errorf("multi-valued header replayed differently (-first +retry):\n%s", diff)
			}
			if got, want := retry.Header().Get("Location"), first.Header().Get("Location"); got != want {
				t.Errorf("replayed Location = %q, want %q", got, want)
			}
			if ev := a.lastEvent(); ev.Outcome != idemhttp.Replayed || ev.StoreCalls != 1 {
				t.Errorf("retry event = %v in %d store calls, want replayed in 1", ev.Outcome, ev.StoreCalls)
			}

			// The same key for 10,000 EUR: rejected, naming the field.
			reuse := a.send("acme", "abc-123", `{"orderId":"ord_8842","amountCents":1000000,"currency":"EUR","traceId":"t-3"}`)
			if reuse.Code != 422 {
				t.Fatalf("key reuse = %d %s, want 422", reuse.Code, reuse.Body)
			}
			p := problemOf(t, reuse)
			if p["type"] != policy.TypeKeyReuse || !strings.Contains(reuse.Body.String(), `"amountCents"`) {
				t.Errorf("key reuse problem = %s, want type %s naming amountCents", reuse.Body, policy.TypeKeyReuse)
			}

			// The same key from another tenant is another operation.
			other := a.send("globex", "abc-123", firstPayment)
			if other.Code != 201 || other.Body.String() == first.Body.String() {
				t.Errorf("another tenant's request = %d %s, want its own execution", other.Code, other.Body)
			}
			if n := a.executions("acme", "abc-123"); n != 1 {
				t.Errorf("acme's payment executed %d times, want 1", n)
			}
			if n := a.executions("globex", "abc-123"); n != 1 {
				t.Errorf("globex's payment executed %d times, want 1", n)
			}
		})
	}
}

// Only what the rule caches is stored: a 500 stays retryable, a declared
// 4xx is replayed, an excluded 429 is not.
func TestCachedStatuses(t *testing.T) {
	for _, tc := range []struct {
		status    int
		wantExecs int
		outcome   idemhttp.Outcome
	}{
		{500, 2, idemhttp.Released},
		{503, 2, idemhttp.Released},
		{429, 2, idemhttp.Released},
		{402, 1, idemhttp.Stored},
		{201, 1, idemhttp.Stored},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			a := newApp(t, backends()[0].new(t), paymentsPolicy, idemhttp.Options{})
			a.respond = func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				w.Write([]byte(`{"status":` + http.StatusText(tc.status) + `}`))
			}
			first := a.send("acme", "k", firstPayment)
			if ev := a.lastEvent(); ev.Outcome != tc.outcome || ev.Status != tc.status {
				t.Errorf("first event = %v %d, want %v %d", ev.Outcome, ev.Status, tc.outcome, tc.status)
			}
			second := a.send("acme", "k", firstPayment)
			if second.Code != tc.status || second.Body.String() != first.Body.String() {
				t.Errorf("second answer = %d %s, want %d %s", second.Code, second.Body, tc.status, first.Body)
			}
			if n := a.executions("acme", "k"); n != tc.wantExecs {
				t.Errorf("executed %d times, want %d", n, tc.wantExecs)
			}
		})
	}
}

// 64 concurrent duplicates of one request: the handler runs exactly once,
// every other answer is a replay or a 409 with Retry-After.
func TestConcurrentDuplicates(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			a := newApp(t, b.new(t), paymentsPolicy, idemhttp.Options{})
			release := make(chan struct{})
			a.respond = func(w http.ResponseWriter, r *http.Request) {
				<-release // hold the reservation while the others arrive
				w.WriteHeader(201)
				w.Write([]byte(`{"id":"pay_1"}`))
			}
			const n = 64
			answers := make([]*httptest.ResponseRecorder, n)
			var wg sync.WaitGroup
			var arrived sync.WaitGroup
			arrived.Add(n - 1)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					answers[i] = a.send("acme", "dup", firstPayment)
					if answers[i].Code == 409 {
						arrived.Done()
					}
				}()
			}
			go func() { arrived.Wait(); close(release) }()
			wg.Wait()
			if got := a.executions("acme", "dup"); got != 1 {
				t.Fatalf("the handler ran %d times for 64 duplicates, want once", got)
			}
			created, conflicts := 0, 0
			for _, w := range answers {
				switch w.Code {
				case 201:
					created++
				case 409:
					conflicts++
					if w.Header().Get("Retry-After") == "" || problemOf(t, w)["type"] != policy.TypeInFlight {
						t.Errorf("a 409 without Retry-After or of another type: %v %s", w.Header(), w.Body)
					}
				default:
					t.Errorf("unexpected answer %d %s", w.Code, w.Body)
				}
			}
			if created != 1 || conflicts != n-1 {
				t.Errorf("%d created and %d conflicts, want 1 and %d", created, conflicts, n-1)
			}
			// Once complete, every duplicate replays.
			if w := a.send("acme", "dup", firstPayment); w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "true" {
				t.Errorf("duplicate after completion = %d %v, want a replayed 201", w.Code, w.Header())
			}
		})
	}
}

// The middleware reuses the buffer a request's body is read into once the
// request is answered. A handler that keeps the body past its return
// (net/http forbids reading it then) reads nothing more, never a later
// request's body.
func TestBodyAfterReturn(t *testing.T) {
	a := newApp(t, backends()[0].new(t), paymentsPolicy, idemhttp.Options{})
	var kept io.Reader
	a.respond = func(w http.ResponseWriter, r *http.Request) {
		kept = r.Body
		w.WriteHeader(http.StatusCreated)
	}
	a.serveBody = func(r *http.Request) {} // leave the body unread
	if w := a.send("acme", "first", firstPayment); w.Code != 201 {
		t.Fatalf("first request: %d %s", w.Code, w.Body)
	}
	second := strings.Replace(firstPayment, "ord_8842", "ord_9999", 1)
	if w := a.send("acme", "second", second); w.Code != 201 {
		t.Fatalf("second request: %d %s", w.Code, w.Body)
	}
	if b, err := io.ReadAll(kept); len(b) != 0 || err != nil {
		t.Errorf("reading the first request's body after its handler returned = %q, %v; want nothing", b, err)
	}
}

// GetBody's readers may outlive the handler (a transport still writing a
// forwarded body): they read the request's own body to the end, even
// after later requests reused the middleware's buffers.
func TestGetBodyAfterReturn(t *testing.T) {
	a := newApp(t, backends()[0].new(t), paymentsPolicy, idemhttp.Options{})
	var kept io.Reader
	a.respond = func(w http.ResponseWriter, r *http.Request) {
		if kept == nil {
			var err error
			if kept, err = r.GetBody(); err != nil {
				t.Errorf("GetBody: %v", err)
			}
		}
		w.WriteHeader(http.StatusCreated)
	}
	if w := a.send("acme", "first", firstPayment); w.Code != 201 {
		t.Fatalf("first request: %d %s", w.Code, w.Body)
	}
	second := strings.Replace(firstPayment, "ord_8842", "ord_9999", 1)
	for i := range 3 {
		if w := a.send("acme", "next"+strconv.Itoa(i), second); w.Code != 201 {
			t.Fatalf("request %d after the first: %d %s", i, w.Code, w.Body)
		}
	}
	if b, err := io.ReadAll(kept); string(b) != firstPayment || err != nil {
		t.Errorf("reading GetBody's reader after the handler returned = %q, %v; want the first request's body %q", b, err, firstPayment)
	}
}

// Trailers a handler sets after its header reach the client, as net/http
// sends them; the record keeps the header as sent, and a replay has no
// trailers (and announces none).
func TestTrailers(t *testing.T) {
	a := newApp(t, backends()[0].new(t), paymentsPolicy, idemhttp.Options{})
	a.respond = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Checksum")
		w.Header().Set("Location", "/payments/pay_1")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"pay_1"}`)
		w.Header().Set("X-Checksum", "c0ffee")
		w.Header().Set(http.TrailerPrefix+"X-Audit", "a1")
	}
	first := a.send("acme", "k", firstPayment).Result()
	io.ReadAll(first.Body)
	want := http.Header{"X-Checksum": {"c0ffee"}, "X-Audit": {"a1"}}
	if diff := cmp.Diff(want, first.Trailer); first.StatusCode != 201 || diff != "" {
		t.Errorf("first answer %d, trailers (-want +got):\n%s", first.StatusCode, diff)
	}
	replay := a.send("acme", "k", firstPayment).Result()
	body, _ := io.ReadAll(replay.Body)
	if replay.StatusCode != 201 || string(body) != `{"id":"pay_1"}` || replay.Header.Get("Location") != "/payments/pay_1" {
		t.Errorf("replay = %d %v %s, want 201 with the first answer's body and Location", replay.StatusCode, replay.Header, body)
	}
	for _, name := range []string{"X-Checksum", "Trailer", "X-Audit", http.TrailerPrefix + "X-Audit"} {
		if v, ok := replay.Header[name]; ok {
			t.Errorf("replay header %s: %q, want none", name, v)
		}
	}
	if len(replay.Trailer) != 0 {
		t.Errorf("replay trailers %v, want none", replay.Trailer)
	}
}

// The hook gets the request's durations: the clock is read for them
// whenever they are observed.
func TestEventDurations(t *testing.T) {
	a := newApp(t, backends()[0].new(t), paymentsPolicy, idemhttp.Options{})
	for _, want := range []idemhttp.Outcome{idemhttp.Stored, idemhttp.Replayed} {
		a.send("acme", "k", firstPayment)
		ev := a.lastEvent()
		if ev.Outcome != want || ev.Duration <= 0 || ev.StoreLatency <= 0 || ev.StoreLatency > ev.Duration {
			t.Errorf("event = %v in %v, store latency %v; want %v with 0 < store latency <= duration", ev.Outcome, ev.Duration, ev.StoreLatency, want)
		}
	}
}

// An event names the request's key by the digest of its storage key,
// and differently for another tenant or key; a request without a key
// has none.
func TestEventKeyHash(t *testing.T) {
	pol, err := policy.Parse([]byte(paymentsPolicy))
	if err != nil {
		t.Fatal(err)
	}
	rule, _ := pol.Match("POST", "/api/payments")
	want := func(tenant, key string) string {
		req, err := rule.NewRequest(tenant, fingerprint.Request{Method: "POST", Path: "/api/payments",
			Header: http.Header{"Idempotency-Key": {key}}, Body: []byte(firstPayment)})
		if err != nil {
			t.Fatal(err)
		}
		pk, _, err := rule.StorageKeys(req)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(pk))
		return base64.RawURLEncoding.EncodeToString(sum[:16])
	}
	a := newApp(t, backends()[0].new(t), paymentsPolicy, idemhttp.Options{})
	seen := map[string]bool{}
	for _, tc := range []struct{ tenant, key string }{{"acme", "k1"}, {"acme", "k2"}, {"globex", "k1"}} {
		a.send(tc.tenant, tc.key, firstPayment)
		ev := a.lastEvent()
		got := ev.KeyHash()
		if w := want(tc.tenant, tc.key); got != w || seen[got] {
			t.Errorf("KeyHash of %s/%s = %q, want %q, distinct from the others", tc.tenant, tc.key, got, w)
		}
		seen[got] = true
	}
	a.send("acme", "", firstPayment)
	if ev := a.lastEvent(); ev.KeyHash() != "" {
		t.Errorf("KeyHash without a key = %q, want \"\"", ev.KeyHash())
	}
}
