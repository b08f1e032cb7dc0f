// Package genlog writes a synthetic traffic log in the JSON Lines envelope
// of package audit: payments, refunds and transfers of several tenants,
// with the retries and key reuses of real clients, in time order, from a
// fixed seed. It serves the audit benchmark and "go run ./cmd/genlog".
package genlog

import (
	"bufio"
	"cmp"
	"container/heap"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// Options shapes a log. The zero value of a field means its default.
type Options struct {
	Requests int     // requests written; default 1,000,000
	Seed     uint64  // default 1
	Rate     float64 // requests a second, on average; default 200
	Tenants  int     // default 8
	// Retry is the share of keyed requests retried with the same key
	// (default 0.06), half of them resending the same bytes, half with a
	// new trace ID and client timestamp; Reuse the share whose key comes
	// back minutes later with another amount (default 0.005).
	Retry, Reuse float64
}

// Policy is a policy for the log: every route it writes with a key has a
// rule, with a TTL of ten minutes so that the key population of a long
// log is stable.
const Policy = `{
  "defaults": {"methods": [], "ttl": "10m", "lease": "30s"},
  "rules": [
    {"route": "POST /v1/payments", "fingerprint": {"ignore": ["traceId"], "required": ["amountCents", "currency", "destination.iban"]}, "store_intent": true},
    {"route": "POST /v1/refunds", "fingerprint": {"intent": ["paymentId", "amountCents"]}, "on_mismatch": "replay"},
    {"route": "POST /v1/accounts/{account}/transfers", "scope": {"route": true},
     "fingerprint": {"intent": ["amountCents", "currency", "counterparty.iban"], "headers": ["X-Api-Version"]}, "mismatch_status": 409}
  ]
}
`

// event is a request scheduled for later: a retry or a reuse.
type event struct {
	at   time.Time
	n    int64
	line []byte
}

type events []event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].n < h[j].n
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(event)) }
func (h *events) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Write writes the log to w.
func Write(w io.Writer, o Options) error {
	o.Requests = cmp.Or(o.Requests, 1_000_000)
	o.Seed = cmp.Or(o.Seed, 1)
	o.Rate = cmp.Or(o.Rate, 200)
	o.Tenants = cmp.Or(o.Tenants, 8)
	o.Retry = cmp.Or(o.Retry, 0.06)
	o.Reuse = cmp.Or(o.Reuse, 0.005)
	g := &gen{r: rand.New(rand.NewPCG(o.Seed, 0x1de3)), o: o, t: time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)}
	bw := bufio.NewWriterSize(w, 1<<20)
	var pending events
	var n int64
	for written := 0; written < o.Requests; {
		g.t = g.t.Add(time.Duration(g.r.ExpFloat64() / o.Rate * float64(time.Second)))
		for len(pending) > 0 && !pending[0].at.After(g.t) && written < o.Requests {
			e := heap.Pop(&pending).(event)
			bw.Write(e.line)
			written++
		}
		if written == o.Requests {
			break
		}
		line, later := g.request()
		bw.Write(line)
		written++
		for _, l := range later {
			n++
			heap.Push(&pending, event{at: l.at, n: n, line: l.line})
		}
	}
	return bw.Flush()
}

type gen struct {
	r   *rand.Rand
	o   Options
	t   time.Time
	seq int64
}

type scheduled struct {
	at   time.Time
	line []byte
}

var (
	currencies = []string{"EUR", "EUR", "EUR", "USD", "GBP"}
	channels   = []string{"web", "ios", "android", "api"}
	ibans      = []string{"DE89370400440532013000", "FR1420041010050500013M02606", "GB29NWBK60161331926819", "NL91ABNA0417164300", "ES9121000418450200051332"}
)

// request returns a request at g.t and the requests it causes later.
func (g *gen) request() ([]byte, []scheduled) {
	g.seq++
	tenant := "tenant-" + strconv.Itoa(g.r.IntN(g.o.Tenants))
	switch p := g.r.Float64(); {
	case p < 0.12: // reads, without keys
		return g.line(g.t, "GET", "/v1/payments/pay_"+strconv.FormatInt(g.r.Int64N(1e9), 36), tenant, "", nil, 200, 20), nil
	case p < 0.125: // a payment without a key
		return g.line(g.t, "POST", "/v1/payments", tenant, "", g.payment(g.r.Int64N(100000)+100, g.t), 201, 200), nil
	}
	key := "key-" + strconv.FormatInt(g.seq, 36) + "-" + strconv.FormatUint(g.r.Uint64()&0xffffff, 16)
	var path string
	var body func(amount int64, at time.Time) []byte
	switch p := g.r.Float64(); {
	case p < 0.75:
		path, body = "/v1/payments", g.payment
	case p < 0.88:
		path = "/v1/refunds"
		pay := "pay_" + strconv.FormatInt(g.r.Int64N(1e9), 36)
		body = func(amount int64, at time.Time) []byte { return g.refund(pay, amount, at) }
	default:
		path = "/v1/accounts/acc_" + strconv.Itoa(g.r.IntN(5000)) + "/transfers"
		body = g.transfer
	}
	amount := g.r.Int64N(500000) + 100
	first := body(amount, g.t)
	status := 201
	if g.r.Float64() < 0.02 {
		status = 503
	}
	line := g.line(g.t, "POST", path, tenant, key, first, status, 50+g.r.IntN(350))
	var later []scheduled
	if g.r.Float64() < g.o.Retry {
		at := g.t.Add(time.Duration(100+g.r.IntN(30000)) * time.Millisecond)
		b := first
		if g.r.IntN(2) == 0 {
			b = body(amount, at) // a new trace ID and client timestamp
		}
		later = append(later, scheduled{at, g.line(at, "POST", path, tenant, key, b, 201, 50+g.r.IntN(350))})
	}
	if g.r.Float64() < g.o.Reuse {
		at := g.t.Add(time.Duration(60+g.r.IntN(540)) * time.Second)
		later = append(later, scheduled{at, g.line(at, "POST", path, tenant, key, body(amount*10, at), 201, 50+g.r.IntN(350))})
	}
	return line, later
}

// line writes one envelope.
func (g *gen) line(at time.Time, method, path, tenant, key string, body []byte, status, ms int) []byte {
	b := make([]byte, 0, 256+len(body))
	b = append(b, `{"time":"`...)
	b = at.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, `","method":"`...)
	b = append(b, method...)
	b = append(b, `","path":"`...)
	b = append(b, path...)
	b = append(b, `","tenant":"`...)
	b = append(b, tenant...)
	b = append(b, `","headers":{"Content-Type":"application/json","User-Agent":"shop-backend/4.2","X-Api-Version":"2024-06-01"`...)
	if key != "" {
		b = append(b, `,"Idempotency-Key":"`...)
		b = append(b, key...)
		b = append(b, '"')
	}
	b = append(b, '}')
	if body != nil {
		b = append(b, `,"body":`...)
		b = append(b, body...)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"duration":"`...)
	b = strconv.AppendInt(b, int64(ms), 10)
	b = append(b, "ms\"}\n"...)
	return b
}

// trace appends the volatile members every request carries.
func (g *gen) trace(b []byte, at time.Time) []byte {
	b = append(b, `"traceId":"`...)
	b = strconv.AppendUint(b, g.r.Uint64(), 16)
	b = append(b, `","clientTimestamp":"`...)
	b = at.Add(-time.Duration(g.r.IntN(50))*time.Millisecond).AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	return append(b, '"')
}

func (g *gen) payment(amount int64, at time.Time) []byte {
	b := make([]byte, 0, 1024)
	b = append(b, `{"amountCents":`...)
	b = strconv.AppendInt(b, amount, 10)
	b = append(b, `,"currency":"`...)
	b = append(b, currencies[int(amount)%len(currencies)]...)
	b = append(b, `","destination":{"iban":"`...)
	b = append(b, ibans[int(amount/7)%len(ibans)]...)
	b = append(b, `","name":"Acme Supplies GmbH","bic":"COBADEFFXXX","address":{"line1":"Friedrichstrasse 123","city":"Berlin","postalCode":"10117","country":"DE"}},`...)
	b = append(b, `"debtor":{"id":"cus_`...)
	b = strconv.AppendInt(b, amount%100000, 36)
	b = append(b, `","email":"billing@example.com"},"reference":"INV-`...)
	b = strconv.AppendInt(b, amount*31%1000000, 10)
	b = append(b, `","description":"Invoice payment for order, net 30, including shipping and handling","metadata":{"orderId":"ord_`...)
	b = strconv.AppendInt(b, amount*17%10000000, 36)
	b = append(b, `","channel":"`...)
	b = append(b, channels[int(amount)%len(channels)]...)
	b = append(b, `","campaign":"spring-sale-2025","items":[{"sku":"SKU-1001","qty":2,"unitCents":1299},{"sku":"SKU-2002","qty":1,"unitCents":4599},{"sku":"SKU-3003","qty":5,"unitCents":250}]},`...)
	b = g.trace(b, at)
	return append(b, '}')
}

func (g *gen) refund(payment string, amount int64, at time.Time) []byte {
	b := make([]byte, 0, 512)
	b = append(b, `{"paymentId":"`...)
	b = append(b, payment...)
	b = append(b, `","amountCents":`...)
	b = strconv.AppendInt(b, amount, 10)
	b = append(b, `,"reason":"requested_by_customer","note":"Customer returned the goods within the 30 day window; refund to the original method","metadata":{"ticket":"SUP-`...)
	b = strconv.AppendInt(b, amount%100000, 10)
	b = append(b, `","agent":"support-bot"},`...)
	b = g.trace(b, at)
	return append(b, '}')
}

func (g *gen) transfer(amount int64, at time.Time) []byte {
	b := make([]byte, 0, 768)
	b = append(b, `{"amountCents":`...)
	b = strconv.AppendInt(b, amount, 10)
	b = append(b, `,"currency":"EUR","counterparty":{"iban":"`...)
	b = append(b, ibans[int(amount/3)%len(ibans)]...)
	b = append(b, `","name":"Globex Corporation","country":"NL"},"purpose":"SUPP","remittance":"Settlement of invoices 2025-Q1, batch `...)
	b = strconv.AppendInt(b, amount%1000, 10)
	b = append(b, `","schedule":{"type":"once","executionDate":"2025-01-07"},"tags":["supplier","recurring","approved"],`...)
	b = g.trace(b, at)
	return append(b, '}')
}
