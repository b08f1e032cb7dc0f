package idemhttp_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// benchRequest is a reusable request: its body reader is reset each time.
type benchRequest struct {
	r    *http.Request
	body *strings.Reader
	src  string
}

func newBenchRequest(key string) *benchRequest {
	b := &benchRequest{src: firstPayment, body: strings.NewReader(firstPayment)}
	b.r = httptest.NewRequest("POST", "/api/payments", io.NopCloser(b.body))
	b.r.Header.Set("X-Tenant", "acme")
	b.r.Header.Set("Idempotency-Key", key)
	return b
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// benchPolicy is the payments rule with the defaults: no intent stored.
const benchPolicy = `{"defaults": {"methods": []}, "rules": [{"route": "POST /api/payments", "fingerprint": {"ignore": ["traceId"]}}]}`

func benchMiddleware(b *testing.B, replay bool) {
	pol, err := policy.Parse([]byte(benchPolicy))
	if err != nil {
		b.Fatal(err)
	}
	st, _ := store.NewMemory(store.MemoryOptions{})
	mw, err := idemhttp.New(pol, st, idemhttp.Options{
		Tenant: func(r *http.Request) (string, bool) { return "acme", true },
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		b.Fatal(err)
	}
	h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"pay_1"}`))
	}))
	req := newBenchRequest("k")
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	b.SetBytes(int64(len(firstPayment)))
	i := 0
	for b.Loop() {
		if !replay {
			req.r.Header["Idempotency-Key"][0] = "k" + strconv.Itoa(i)
		}
		i++
		req.body.Reset(req.src)
		req.r.Body = io.NopCloser(req.body)
		req.r.ContentLength = int64(len(req.src))
		clear(w.h)
		h.ServeHTTP(w, req.r)
	}
}

func BenchmarkMiddlewareExecute(b *testing.B) { benchMiddleware(b, false) }
func BenchmarkMiddlewareReplay(b *testing.B)  { benchMiddleware(b, true) }
