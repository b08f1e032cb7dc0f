package idemhttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// paymentsPolicy governs POST /api/payments: trace IDs are not intent,
// a reuse of a key with another body is rejected with 422 naming the
// differing fields; 4xx answers are stored too, except 429.
const paymentsPolicy = `{
  "defaults": {"ttl": "24h", "lease": "30s", "methods": []},
  "rules": [
    {"route": "POST /api/payments",
     "fingerprint": {"ignore": ["traceId"]},
     "on_mismatch": "reject", "mismatch_status": 422, "store_intent": true,
     "cache": ["2xx", "4xx", "!429"]}
  ]
}`

// backend is a store the middleware tests run against.
type backend struct {
	name string
	new  func(t *testing.T) store.Store
}

// backends returns the stores to test with: the memory store, and the
// service-backed ones when they are configured (see stores_test.go).
func backends() []backend {
	return append([]backend{{"Memory", func(t *testing.T) store.Store {
		m, err := store.NewMemory(store.MemoryOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}}}, serviceBackends...)
}

// serviceBackends are added by files that need a service.
var serviceBackends []backend

// app is a payments service behind the middleware: it counts executions
// per key and answers each with a new payment ID.
type app struct {
	t       *testing.T
	mw      *idemhttp.Middleware
	handler http.Handler

	mu     sync.Mutex
	execs  map[string]int // by tenant and key
	events []idemhttp.Event
	serial atomic.Int64
	// respond, when set, writes the answer instead of the default 201.
	respond func(w http.ResponseWriter, r *http.Request)
	// serveBody, when set, reads the body instead of decoding it as JSON.
	serveBody func(r *http.Request)
}

func newApp(t *testing.T, st store.Store, policySrc string, opts idemhttp.Options) *app {
	t.Helper()
	pol, err := policy.Parse([]byte(policySrc))
	if err != nil {
		t.Fatal(err)
	}
	a := &app{t: t, execs: map[string]int{}}
	if opts.Tenant == nil && opts.SingleTenant == "" {
		opts.Tenant = func(r *http.Request) (string, bool) {
			v := r.Header.Get("X-Tenant")
			return v, v != ""
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.OnDecision = func(ev idemhttp.Event) {
		a.mu.Lock()
		a.events = append(a.events, ev)
		a.mu.Unlock()
	}
	a.mw, err = idemhttp.New(pol, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	a.handler = a.mw.Wrap(http.HandlerFunc(a.serve))
	return a
}

func (a *app) serve(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if a.serveBody != nil {
		a.serveBody(r)
	} else if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		a.t.Errorf("the handler got a body that does not decode: %v", err)
	}
	a.mu.Lock()
	a.execs[r.Header.Get("X-Tenant")+"/"+r.Header.Get("Idempotency-Key")]++
	a.mu.Unlock()
	if a.respond != nil {
		a.respond(w, r)
		return
	}
	n := a.serial.Add(1)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", fmt.Sprintf("/api/payments/pay_%d", n))
	w.Header()["Link"] = []string{"</a>; rel=next", "</b>; rel=prev"}
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"id":"pay_%d","amountCents":%v}`, n, body["amountCents"])
}

// executions returns how often the handler ran for a tenant's key.
func (a *app) executions(tenant, key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.execs[tenant+"/"+key]
}

// lastEvent returns the last event reported.
func (a *app) lastEvent() idemhttp.Event {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.events) == 0 {
		a.t.Fatal("no event reported")
	}
	return a.events[len(a.events)-1]
}

// send sends a payment request through the middleware.
func (a *app) send(tenant, key, body string) *httptest.ResponseRecorder {
	return a.sendCtx(context.Background(), tenant, key, body)
}

func (a *app) sendCtx(ctx context.Context, tenant, key, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequestWithContext(ctx, "POST", "/api/payments", strings.NewReader(body))
	if tenant != "" {
		r.Header.Set("X-Tenant", tenant)
	}
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	return w
}

// problemOf decodes a problem response.
func problemOf(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json (status %d, body %s)", ct, w.Code, w.Body)
	}
	var p map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("problem body %q: %v", w.Body, err)
	}
	return p
}

// eachBackend runs test once per backend, in a subtest named for it.
func eachBackend(t *testing.T, test func(t *testing.T, newStore func(*testing.T) store.Store)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { test(t, b.new) })
	}
}
