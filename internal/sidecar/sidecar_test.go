package sidecar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idemprint/idemprint/internal/sidecar"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// testPolicy governs POST /pay with a 1 s lease, so that tests of a held
// reservation wait little.
const testPolicy = `{
  "defaults": {"methods": []},
  "rules": [{"route": "POST /pay", "lease": "1s", "ttl": "1h"}]
}`

// upstream is an API behind the sidecar that counts executions by key.
type upstream struct {
	*httptest.Server
	mu     sync.Mutex
	execs  map[string]int
	header map[string]http.Header // the last request's header, by key
	// respond, when set, answers instead of the default 201.
	respond func(w http.ResponseWriter, r *http.Request, n int)
}

func newUpstream(t *testing.T) *upstream {
	u := &upstream{execs: map[string]int{}, header: map[string]http.Header{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		key := r.Header.Get("Idempotency-Key")
		u.mu.Lock()
		u.execs[key]++
		n := u.execs[key]
		u.header[key] = r.Header.Clone()
		respond := u.respond
		u.mu.Unlock()
		if respond != nil {
			respond(w, r, n)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"key":%q,"execution":%d}`, key, n)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) executions(key string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.execs[key]
}

func (u *upstream) setRespond(f func(w http.ResponseWriter, r *http.Request, n int)) {
	u.mu.Lock()
	u.respond = f
	u.mu.Unlock()
}

// front is a sidecar on a test server.
type front struct {
	*httptest.Server
	sc  *sidecar.Sidecar
	reg *prometheus.Registry
}

func newFront(t *testing.T, upstreamURL string, cfg sidecar.Config) *front {
	t.Helper()
	pol, err := policy.Parse([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewMemory(store.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(upstreamURL)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg.Upstream, cfg.Policy, cfg.Store, cfg.Registry = u, pol, st, reg
	if cfg.TenantHeader == "" && cfg.SingleTenant == "" {
		cfg.SingleTenant = "acme"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	sc, err := sidecar.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &front{Server: httptest.NewServer(sc), sc: sc, reg: reg}
	t.Cleanup(f.Close)
	return f
}

// answer is what a client got.
type answer struct {
	Status int
	Header http.Header
	Body   string
	Err    error // a broken response
}

// problemType returns the type of a problem answer, or "".
func (a answer) problemType() string {
	var p struct{ Type string }
	json.Unmarshal([]byte(a.Body), &p)
	return p.Type
}

// send posts body to /pay with key, and header pairs.
func (f *front) send(t *testing.T, key, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest("POST", f.URL+"/pay", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := f.Client().Do(req)
	if err != nil {
		return answer{Err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return answer{Status: resp.StatusCode, Header: resp.Header, Body: string(b), Err: err}
}

const pay = `{"amount":100,"currency":"EUR"}`

func TestForward(t *testing.T) {
	up := newUpstream(t)
	f := newFront(t, up.URL, sidecar.Config{})
	first := f.send(t, "k1", pay)
	if first.Status != 201 || first.Body != `{"key":"k1","execution":1}` {
		t.Fatalf("first = %d %s, want 201 from the upstream", first.Status, first.Body)
	}
	retry := f.send(t, "k1", `{"currency":"EUR","amount":100.0}`)
	if retry.Status != 201 || retry.Body != first.Body || retry.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry = %d %s %v, want the first answer replayed", retry.Status, retry.Body, retry.Header)
	}
	reuse := f.send(t, "k1", `{"amount":999,"currency":"EUR"}`)
	if reuse.Status != 422 || reuse.problemType() != policy.TypeKeyReuse {
		t.Errorf("reuse = %d %s, want 422 %s", reuse.Status, reuse.Body, policy.TypeKeyReuse)
	}
	if n := up.executions("k1"); n != 1 {
		t.Errorf("upstream executed k1 %d times, want 1", n)
	}
	h := up.header["k1"]
	if h.Get("Idempotency-Key") != "k1" || h.Get("X-Forwarded-For") == "" {
		t.Errorf("upstream got header %v, want the key and X-Forwarded-For", h)
	}
	// Ungoverned requests pass through.
	resp, err := f.Client().Get(f.URL + "/pay")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 || up.executions("") != 1 {
		t.Errorf("GET = %d, want it passed through", resp.StatusCode)
	}
}

// The body the middleware read goes to the upstream with its length and
// in the same write as the header: each of the upstream's first reads of
// a request has both.
func TestForwardOneWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	reads := make(chan string, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf) // the client waits for the answer: one request at a time
					if err != nil {
						return
					}
					reads <- string(buf[:n])
					io.WriteString(c, "HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\n{}")
				}
			}()
		}
	}()
	f := newFront(t, "http://"+ln.Addr().String(), sidecar.Config{})
	for i := range 20 {
		if a := f.send(t, fmt.Sprint("k", i), pay); a.Status != 201 || a.Body != "{}" {
			t.Fatalf("answer = %d %q, want 201 {}", a.Status, a.Body)
		}
		got := <-reads
		if !strings.HasSuffix(got, "\r\n\r\n"+pay) || !strings.Contains(got, fmt.Sprintf("\r\nContent-Length: %d\r\n", len(pay))) {
			t.Fatalf("request %d: the upstream's first read = %q, want the header with Content-Length and the body", i, got)
		}
	}
}

func TestTenantHeader(t *testing.T) {
	up := newUpstream(t)
	f := newFront(t, up.URL, sidecar.Config{TenantHeader: "X-Account"})
	tests := []struct {
		name   string
		header []string
		status int
		typ    string
	}{
		{"Missing", nil, 400, "https://idemprint.dev/problems/tenant-unknown"},
		{"Empty", []string{"X-Account", ""}, 400, "https://idemprint.dev/problems/tenant-unknown"},
		{"Repeated", []string{"X-Account", "a", "X-Account", "b"}, 400, "https://idemprint.dev/problems/tenant-unknown"},
		{"Present", []string{"X-Account", "a"}, 201, ""},
		{"OtherTenantSameKey", []string{"X-Account", "b"}, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.send(t, "k", pay, tt.header...)
			if a.Status != tt.status || a.problemType() != tt.typ {
				t.Errorf("answer = %d %s, want %d %s", a.Status, a.Body, tt.status, tt.typ)
			}
		})
	}
	if n := up.executions("k"); n != 2 {
		t.Errorf("upstream executed k %d times, want 2 (once per tenant)", n)
	}
}

// closedPort returns an address on which nothing listens.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// An upstream that refuses the connection never saw the request: 502,
// and the key is free, so the retry is not told 409.
func TestUpstreamUnreachable(t *testing.T) {
	f := newFront(t, "http://"+closedPort(t), sidecar.Config{})
	for i := range 2 {
		a := f.send(t, "k", pay)
		if a.Status != 502 || a.problemType() != sidecar.TypeUpstreamUnreachable {
			t.Fatalf("try %d = %d %s, want 502 %s (the key released)", i, a.Status, a.Body, sidecar.TypeUpstreamUnreachable)
		}
	}
	if got := counterValue(t, f.reg, "idemprint_upstream_errors_total", "kind", "unreachable"); got != 2 {
		t.Errorf("upstream_errors_total{kind=unreachable} = %v, want 2", got)
	}
}

// counterValue returns the value of the counter name whose labels include
// every pair of labels, or 0 when there is none.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// Each way an upstream can fail after it received the request holds the
// key: the quick retry is told 409, and the retry after the lease (1 s)
// executes.
func TestUpstreamOutcomeUnknown(t *testing.T) {
	tests := []struct {
		name    string
		respond func(w http.ResponseWriter, r *http.Request)
		status  int    // of the failed request; 0 for a broken response
		kind    string // the upstream_errors_total label
	}{
		{"Timeout", func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(300 * time.Millisecond) // beyond the 100 ms timeout
			w.WriteHeader(201)
		}, 504, "outcome-unknown"},
		{"ResetBeforeResponse", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.(*net.TCPConn).SetLinger(0) // RST
			conn.Close()
		}, 504, "outcome-unknown"},
		{"ClosedBeforeResponse", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}, 504, "outcome-unknown"},
		{"ResetMidResponse", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(201)
			w.Write([]byte(`{"id":`))
			http.NewResponseController(w).Flush()
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}, 0, "aborted"},
		{"TimeoutMidResponse", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(201)
			w.Write([]byte(`{"id":`))
			http.NewResponseController(w).Flush()
			time.Sleep(300 * time.Millisecond)
		}, 0, "aborted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := newUpstream(t)
			f := newFront(t, up.URL, sidecar.Config{Proxy: sidecar.ProxyOptions{Timeout: 100 * time.Millisecond}})
			up.setRespond(func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					tt.respond(w, r)
					return
				}
				w.WriteHeader(201)
			})
			a := f.send(t, "k", pay)
			switch {
			case tt.status == 0 && a.Err == nil:
				t.Fatalf("failed request = %d %q, want a broken response", a.Status, a.Body)
			case tt.status != 0 && (a.Status != tt.status || a.problemType() != sidecar.TypeUpstreamOutcomeUnknown || a.Header.Get("Retry-After") != "1"):
				t.Fatalf("failed request = %d %v %s, want %d %s with Retry-After: 1", a.Status, a.Header, a.Body, tt.status, sidecar.TypeUpstreamOutcomeUnknown)
			}
			if a := f.send(t, "k", pay); a.Status != 409 || a.problemType() != policy.TypeInFlight {
				t.Errorf("quick retry = %d %s, want 409 %s", a.Status, a.Body, policy.TypeInFlight)
			}
			time.Sleep(1100 * time.Millisecond) // the lease lapses
			if a := f.send(t, "k", pay); a.Status != 201 {
				t.Errorf("retry after the lease = %d %s, want 201", a.Status, a.Body)
			}
			if n := up.executions("k"); n != 2 {
				t.Errorf("upstream executions = %d, want 2 (the failed one, the retry after the lease)", n)
			}
			if got := counterValue(t, f.reg, "idemprint_upstream_errors_total", "kind", tt.kind); got != 1 {
				t.Errorf("upstream_errors_total{kind=%s} = %v, want 1", tt.kind, got)
			}
		})
	}
}

// net/http's transport replays a request without a body that carries an
// Idempotency-Key header when a reused connection breaks before the
// answer, though the upstream may have executed it. The sidecar's request
// must not be replayed behind the middleware's back.
func TestNoTransportReplay(t *testing.T) {
	up := newUpstream(t)
	f := newFront(t, up.URL, sidecar.Config{})
	up.setRespond(func(w http.ResponseWriter, r *http.Request, n int) {
		if r.Method == "POST" && n == 1 {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close() // after reading the request: it may have executed
			return
		}
		w.WriteHeader(201)
	})
	resp, err := f.Client().Get(f.URL + "/warm") // leaves an idle connection to reuse
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	a := f.send(t, "k", "")
	if a.Status != 504 || up.executions("k") != 1 {
		t.Errorf("bodiless request = %d %s after %d upstream executions, want 504 after 1", a.Status, a.Body, up.executions("k"))
	}
}

// Every governed request is one log line and one count, naming its key
// only by hash.
func TestMetricsAndLog(t *testing.T) {
	up := newUpstream(t)
	var logs syncBuffer
	f := newFront(t, up.URL, sidecar.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	const key = "secret-key-1"
	f.send(t, key, pay)
	f.send(t, key, pay)
	f.send(t, key, `{"amount":1,"currency":"EUR"}`)

	for _, tt := range []struct{ action, reason, outcome string }{
		{"execute", "first", "stored"},
		{"replay", "retry", "replayed"},
		{"reject", "mismatch", "rejected"},
	} {
		got := counterValue(t, f.reg, "idemprint_decisions_total",
			"rule", "/rules/0", "route", "POST /pay", "action", tt.action, "reason", tt.reason, "outcome", tt.outcome)
		if got != 1 {
			t.Errorf("decisions_total{%s,%s,%s} = %v, want 1", tt.action, tt.reason, tt.outcome, got)
		}
	}
	text, err := prometheusText(f.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`idemprint_store_duration_seconds_count{op="reserve",result="ok"} 3`,
		`idemprint_store_duration_seconds_count{op="write",result="ok"} 1`,
		`idemprint_request_duration_seconds_count{outcome="stored",rule="/rules/0"} 1`,
		`idemprint_requests_executing 0`,
		`idemprint_requests_waiting 0`,
		`idemprint_requests_in_flight 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("log has %d lines, want 3:\n%s", len(lines), logs.String())
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"key_hash", "tenant", "rule", "route", "action", "reason", "outcome", "status", "fingerprint", "latency", "store_latency", "store_calls"} {
		if _, ok := first[name]; !ok {
			t.Errorf("log line lacks %q: %s", name, lines[0])
		}
	}
	if first["msg"] != "request" || first["outcome"] != "stored" || first["tenant"] != "acme" || first["key_hash"] == "" {
		t.Errorf("first log line = %s", lines[0])
	}
	if strings.Contains(logs.String(), key) || strings.Contains(logs.String(), "EUR") {
		t.Errorf("the log reveals the key or the body:\n%s", logs.String())
	}
}

// prometheusText renders the registry's metrics in the text format.
func prometheusText(reg *prometheus.Registry) (string, error) {
	rec := httptest.NewRecorder()
	sidecar.Admin(func(context.Context) error { return nil }, reg).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		return "", fmt.Errorf("/metrics = %d", rec.Code)
	}
	return rec.Body.String(), nil
}

func TestAdmin(t *testing.T) {
	reg := prometheus.NewRegistry()
	var down error
	h := sidecar.Admin(func(context.Context) error { return down }, reg)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := get("/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz = %d %q, want ready", code, body)
	}
	down = errors.New("store: ping: store unavailable")
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "store unavailable") {
		t.Errorf("/readyz with the store down = %d %q, want 503 saying why", code, body)
	}
	if code, _ := get("/metrics"); code != 200 {
		t.Errorf("/metrics = %d", code)
	}
}

// syncBuffer is a bytes.Buffer for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The upstream timeout bounds silence, not idleness between requests: a
// pooled connection reused just before it would have timed out, or one
// that timed out while idle, never fails a request.
func TestUpstreamTimeoutIdleConnections(t *testing.T) {
	up := newUpstream(t)
	f := newFront(t, up.URL, sidecar.Config{Proxy: sidecar.ProxyOptions{Timeout: 200 * time.Millisecond}})
	for i, pause := range []time.Duration{0, 150 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 0} {
		time.Sleep(pause)
		if a := f.send(t, fmt.Sprintf("k%d", i), pay); a.Status != 201 {
			t.Errorf("request %d after %v idle = %d %s, want 201", i, pause, a.Status, a.Body)
		}
	}
}

// The upstream timeout bounds silence, not length: an answer trickled
// byte by byte, each within the timeout, arrives whole however long it
// takes, although the deadlines are moved only now and then.
func TestUpstreamTimeoutProgress(t *testing.T) {
	up := newUpstream(t)
	f := newFront(t, up.URL, sidecar.Config{Proxy: sidecar.ProxyOptions{Timeout: 100 * time.Millisecond}})
	const want = `{"id":"pay_1"}`
	up.setRespond(func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(201)
		for i := range len(want) { // 14 pauses of 40 ms: 560 ms in all
			time.Sleep(40 * time.Millisecond)
			w.Write([]byte(want[i : i+1]))
			http.NewResponseController(w).Flush()
		}
	})
	if a := f.send(t, "k", pay); a.Status != 201 || a.Body != want || a.Err != nil {
		t.Errorf("trickled answer = %d %q %v, want 201 %q", a.Status, a.Body, a.Err, want)
	}
}
