package bench

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// middlewareSetup is what the middleware benchmarks serve: the payment
// body of the corpus and the policy governing it.
type middlewareSetup struct {
	body []byte
	pol  *policy.Policy
}

func newMiddlewareSetup(b *testing.B) middlewareSetup {
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
	return middlewareSetup{body: body, pol: pol}
}

// handler returns the payment handler behind the middleware, with a new
// memory store.
func (s middlewareSetup) handler(b *testing.B) http.Handler {
	h, _ := s.handlerWith(b, nil)
	return h
}

// handlerWith is handler with the store's clock, nil for the process's.
func (s middlewareSetup) handlerWith(b *testing.B, clock func() time.Time) (http.Handler, *store.Memory) {
	// Keys are never reused: room for more than any run makes.
	st, err := store.NewMemory(store.MemoryOptions{MaxRecords: 1 << 26, Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	mw, err := idemhttp.New(s.pol, st, idemhttp.Options{SingleTenant: "acme", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	return mw.Wrap(paymentHandler), st
}

// steadyLive is how many records the store holds in BenchmarkMiddleware's
// steady case.
const steadyLive = 100_000

// steady returns the payment handler behind the middleware, with a
// memory store in its steady state: its clock moves on by the rule's TTL
// ÷ steadyLive at each call of tick, before each request, so that records
// end as fast as they are made, and the store has been filled until they
// do. A store of a service that has run for a TTL is in that state; one
// that only grows, as in the execute case, sweeps nothing.
func (s middlewareSetup) steady(b *testing.B, q *requester) (h http.Handler, tick func()) {
	rule, _ := s.pol.Match("POST", "/v1/payments")
	step := rule.TTL() / steadyLive
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h, st := s.handlerWith(b, func() time.Time { return now })
	tick = func() { now = now.Add(step) }
	for range steadyLive + steadyLive/2 {
		tick()
		q.serve(h)
	}
	if n := st.Len(); n < steadyLive || n > steadyLive+steadyLive/100 {
		b.Fatalf("the store holds %d records, not about %d: not in its steady state", n, steadyLive)
	}
	q.check(b)
	return h, tick
}

// sum returns fingerprint.Sum of the body under the rule's intent, the
// yardstick of the middleware's added cost.
func (s middlewareSetup) sum(b *testing.B) func() {
	rule, _ := s.pol.Match("POST", "/v1/payments")
	f := rule.Fingerprinter()
	return func() {
		var err error
		if fingerprintSink, err = f.Sum(fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: s.body}); err != nil {
			b.Fatal(err)
		}
	}
}

// requester serves the payment request again and again, reusing its
// request and writer so that the loop's own work stays small and equal
// with and without the middleware.
type requester struct {
	r      *http.Request
	w      *discardWriter
	src    *strings.Reader
	keys   []string
	text   string
	size   int64
	newKey bool
	i, n   int
}

// newRequester returns a requester of body; with newKey, each request
// carries a new key.
func newRequester(body []byte, newKey bool) *requester {
	q := &requester{
		r:      httptest.NewRequest("POST", "/v1/payments", nil),
		w:      &discardWriter{h: http.Header{}},
		src:    strings.NewReader(""),
		text:   string(body), // once: the loop's allocations would make the collector run for them
		size:   int64(len(body)),
		newKey: newKey,
	}
	q.r.Header.Set("Idempotency-Key", "key-0")
	q.keys = q.r.Header["Idempotency-Key"]
	return q
}

// serve sends one request to h.
func (q *requester) serve(h http.Handler) {
	if q.newKey {
		q.i++
		q.keys[0] = "key-" + strconv.Itoa(q.i)
	}
	q.src.Reset(q.text)
	q.r.Body = io.NopCloser(q.src)
	q.r.ContentLength = q.size
	clear(q.w.h)
	h.ServeHTTP(q.w, q.r)
	q.n++
}

// check fails b unless every request was answered 201.
func (q *requester) check(b *testing.B) {
	if q.w.created != q.n {
		b.Fatalf("%d of %d requests were answered 201", q.w.created, q.n)
	}
}

// BenchmarkMiddleware measures what the idemhttp middleware adds to a
// request of the payment body, with the memory store: "bare" is the
// handler alone, "execute" a first request (a new key each time: reserve,
// run, complete) to a store that grows, "execute_steady" the same to a
// store of steadyLive records whose records end as fast as new ones come
// (each request sweeps one), "replay" a retry answered from its record,
// and "sum" fingerprint.Sum of the same body under the same intent, the
// yardstick of the middleware's added cost.
func BenchmarkMiddleware(b *testing.B) {
	s := newMiddlewareSetup(b)
	run := func(b *testing.B, h http.Handler, newKey bool) {
		q := newRequester(s.body, newKey)
		b.SetBytes(q.size)
		b.ReportAllocs()
		for b.Loop() {
			q.serve(h)
		}
		q.check(b)
	}
	// bare takes a new key each time too, so that the loop's own work is
	// the same as execute's and only the middleware's is left in the
	// difference.
	b.Run("payment_small/bare", func(b *testing.B) { run(b, paymentHandler, true) })
	b.Run("payment_small/execute", func(b *testing.B) { run(b, s.handler(b), true) })
	b.Run("payment_small/execute_steady", func(b *testing.B) {
		q := newRequester(s.body, true)
		h, tick := s.steady(b, q)
		b.SetBytes(q.size)
		b.ReportAllocs()
		for b.Loop() {
			tick()
			q.serve(h)
		}
		q.check(b)
	})
	b.Run("payment_small/replay", func(b *testing.B) { run(b, s.handler(b), false) })
	b.Run("payment_small/sum", func(b *testing.B) {
		sum := s.sum(b)
		b.SetBytes(int64(len(s.body)))
		b.ReportAllocs()
		for b.Loop() {
			sum()
		}
	})
}

// BenchmarkMiddlewareFootprint measures what a first execution leaves
// behind in the memory store: the heap its record holds once the
// collector has run (retained-B/op) and in how many objects
// (retained-objects/op), counting the store's share of its map and its
// heap of ends. A growing store touches that much fresh memory per
// request, and a full one holds MaxRecords times it. ns/op is not a
// figure of merit here.
func BenchmarkMiddlewareFootprint(b *testing.B) {
	s := newMiddlewareSetup(b)
	h := s.handler(b)
	q := newRequester(s.body, true)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		q.serve(h)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	q.check(b)
	// After Loop, b.N is the number of requests served.
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "retained-B/op")
	b.ReportMetric(float64(int64(after.HeapObjects)-int64(before.HeapObjects))/float64(b.N), "retained-objects/op")
	runtime.KeepAlive(h)
}

// interleavedBlock is how many requests (or sums) one block of
// BenchmarkMiddlewareInterleaved times: some milliseconds, so that the
// clock's granularity and a block's first, cold iterations do not count.
const interleavedBlock = 1000

// BenchmarkMiddlewareInterleaved measures the ratios of BenchmarkMiddleware
// where the machine's speed drifts: on a shared host the same code can run
// a third slower for seconds at a time, and the sub-benchmarks of
// BenchmarkMiddleware, a second apart, can fall in different spells. Each
// round times one block each of bare requests, first executions, replays
// and sums, in an order that turns round by round, and computes the
// round's ratios from blocks a few milliseconds apart; the metrics are
// their medians over the rounds: execute-x-sum is the added cost of a
// first execution ÷ fingerprint.Sum, replay-x-sum that of a replay.
// ns/op is one round.
func BenchmarkMiddlewareInterleaved(b *testing.B) {
	s := newMiddlewareSetup(b)
	bare, exec, replay := newRequester(s.body, true), newRequester(s.body, true), newRequester(s.body, false)
	execH, replayH, sum := s.handler(b), s.handler(b), s.sum(b)
	blocks := []func(){
		func() { bare.serve(paymentHandler) },
		func() { exec.serve(execH) },
		func() { replay.serve(replayH) },
		sum,
	}
	var execRatios, replayRatios []float64
	var took [4]time.Duration
	round := 0
	for b.Loop() {
		for k := range blocks {
			i := (k + round) % len(blocks)
			start := time.Now()
			for range interleavedBlock {
				blocks[i]()
			}
			took[i] = time.Since(start)
		}
		round++
		execRatios = append(execRatios, float64(took[1]-took[0])/float64(took[3]))
		replayRatios = append(replayRatios, float64(took[2]-took[0])/float64(took[3]))
	}
	bare.check(b)
	exec.check(b)
	replay.check(b)
	b.ReportMetric(median(execRatios), "execute-x-sum")
	b.ReportMetric(median(replayRatios), "replay-x-sum")
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
