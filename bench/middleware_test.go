package bench

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// middlewarePolicy governs the payment body of the corpus with the same
// intent paths BenchmarkSum selects.
const middlewarePolicy = `{"defaults": {"methods": []}, "rules": [{"route": "POST /v1/payments",
  "fingerprint": {"intent": ["amountCents", "currency", "destination.iban", "reference", "debtor.id"]}}]}`

// discardWriter is a ResponseWriter that keeps nothing but a count of the
// 201s it was sent, so that a run proves it measured answers, not
// problems: what a server costs beyond it is the same with and without
// the middleware.
type discardWriter struct {
	h       http.Header
	created int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(status int) {
	if status == http.StatusCreated {
		d.created++
	}
}

// paymentHandler is the trivial handler behind the middleware.
var paymentHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header()["Content-Type"] = []string{"application/json"}
	w.WriteHeader(http.StatusCreated)
	w.Write([]byte(`{"id":"pay_1","status":"succeeded"}`))
})

// BenchmarkMiddleware measures what the idemhttp middleware adds to a
// request of the payment body, with the memory store: "bare" is the
// handler alone, "execute" a first request (a new key each time: reserve,
// run, complete), "replay" a retry answered from its record, and "sum"
// fingerprint.Sum of the same body under the same intent, the yardstick of
// the middleware's added cost.
func BenchmarkMiddleware(b *testing.B) {
	var body []byte
	for _, c := range corpusCases {
		if c.name == "payment_small" {
			body = corpusFile(b, c)
		}
	}
	pol, err := policy.Parse([]byte(middlewarePolicy))
	if err != nil {
		b.Fatal(err)
	}
	newHandler := func(b *testing.B) http.Handler {
		// Keys are never reused: room for more than any run makes.
		st, err := store.NewMemory(store.MemoryOptions{MaxRecords: 1 << 26})
		if err != nil {
			b.Fatal(err)
		}
		mw, err := idemhttp.New(pol, st, idemhttp.Options{SingleTenant: "acme", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		return mw.Wrap(paymentHandler)
	}
	run := func(b *testing.B, h http.Handler, newKey bool) {
		src := strings.NewReader("")
		r := httptest.NewRequest("POST", "/v1/payments", nil)
		r.Header.Set("Idempotency-Key", "key-0")
		w := &discardWriter{h: http.Header{}}
		keys := r.Header["Idempotency-Key"]
		text := string(body) // once: the loop's allocations would make the collector run for them
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		i, n := 0, 0
		for b.Loop() {
			if newKey {
				i++
				keys[0] = "key-" + strconv.Itoa(i)
			}
			src.Reset(text)
			r.Body = io.NopCloser(src)
			r.ContentLength = int64(len(body))
			clear(w.h)
			h.ServeHTTP(w, r)
			n++
		}
		if w.created != n {
			b.Fatalf("%d of %d requests were answered 201", w.created, n)
		}
	}
	// bare takes a new key each time too, so that the loop's own work is
	// the same as execute's and only the middleware's is left in the
	// difference.
	b.Run("payment_small/bare", func(b *testing.B) { run(b, paymentHandler, true) })
	b.Run("payment_small/execute", func(b *testing.B) { run(b, newHandler(b), true) })
	b.Run("payment_small/replay", func(b *testing.B) { run(b, newHandler(b), false) })
	b.Run("payment_small/sum", func(b *testing.B) {
		rule, _ := pol.Match("POST", "/v1/payments")
		f := rule.Fingerprinter()
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if fingerprintSink, err = f.Sum(fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: body}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
