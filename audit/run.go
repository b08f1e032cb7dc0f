package audit

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/tidwall/gjson"
)

// Defaults of [Options].
const (
	// DefaultTenant is the tenant of the requests for which neither
	// Options.TenantHeader nor the envelope names one.
	DefaultTenant = "default"
	// DefaultReorderWindow is how much earlier than the latest request
	// read a request may be timed and still be decided in time order.
	DefaultReorderWindow = 10 * time.Second
	// DefaultReorderRequests is how many requests may wait to be decided
	// in time order.
	DefaultReorderRequests = 100_000
	// DefaultMaxLine is the longest line, or HAR entry, read: 4 MiB.
	DefaultMaxLine = 4 << 20
	// DefaultMaxBody is the largest request body fingerprinted, 1 MiB, the
	// default of the idemhttp middleware, which answers a larger one with
	// a 413 problem.
	DefaultMaxBody = 1 << 20
	// DefaultMaxKeys is the most records the in-memory store holds at
	// once: the keys whose TTL window is open.
	DefaultMaxKeys = 1 << 22
)

// Options configures [Run]. The zero value is a useful default.
type Options struct {
	// TenantHeader names the request header whose value is the tenant, as
	// a service's tenant function would read it; a governed request
	// without it is answered 400, as idemhttp answers it. When empty, the
	// tenant is the envelope's "tenant", else [DefaultTenant].
	TenantHeader string
	// Strict stops the run at the first malformed or late request, which
	// Run returns as an [*Error]. Otherwise such requests are counted and
	// the first 20 reported, and the run goes on.
	Strict bool
	// Workers is the number of goroutines that parse and fingerprint
	// requests; 0 means GOMAXPROCS.
	Workers int
	// ReorderWindow and ReorderRequests bound the reordering of requests
	// by time: a request is decided once a request timed more than
	// ReorderWindow later has been read, or once more than
	// ReorderRequests wait. A request timed before one already decided is
	// late: it is counted (ErrLate) and not decided. 0 means
	// [DefaultReorderWindow] and [DefaultReorderRequests].
	ReorderWindow   time.Duration
	ReorderRequests int
	// MaxLine is the longest line or HAR entry read, in bytes; 0 means
	// [DefaultMaxLine]. A longer one is malformed (ErrTooLong); a HAR
	// entry of more than twice the limit stops the run, since the rest of
	// the file cannot be found without reading it.
	MaxLine int
	// MaxBody is the largest body of a request with a key that is
	// fingerprinted; 0 means [DefaultMaxBody]. A larger one is counted as
	// invalid, answered 413.
	MaxBody int
	// MaxKeys bounds the records the in-memory store holds; 0 means
	// [DefaultMaxKeys]. More keys whose TTL window is open at once stop
	// the run with an error wrapping store.ErrFull.
	MaxKeys int
	// Progress, when set, is called from time to time, from another
	// goroutine than Run's, with how far the run is.
	Progress func(Progress)
}

// Progress tells how far a run is.
type Progress struct {
	// Read is the number of bytes read of the inputs, as stored; Total
	// their size, or -1 when one of them has an unknown size.
	Read, Total int64
	// Requests is the number of requests decided so far.
	Requests int64
}

func (o *Options) maxLine() int { return orDefault(o.MaxLine, DefaultMaxLine) }
func (o *Options) maxBody() int { return orDefault(o.MaxBody, DefaultMaxBody) }

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Run replays the requests of the logs, one after the other as one log in
// time order, through the policy, and reports what it would have done.
// See the package documentation for the formats, the replay and the
// report.
//
// The error is an [*Error] for an input that cannot be read (an unknown
// format, a read error, a HAR entry far over the limit) or, under
// Options.Strict, for the first malformed or late request; the store's
// error when more keys are live than Options.MaxKeys; or ctx's.
func Run(ctx context.Context, pol *policy.Policy, inputs []Input, opts Options) (*Report, error) {
	if pol == nil {
		return nil, errors.New("audit: nil policy")
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	rp, err := newReplayer(ctx, pol, &opts, inputs)
	if err != nil {
		return nil, err
	}
	work := make(chan *batch, 2*workers)
	done := make(chan *batch, 2*workers)
	rd := &reader{opts: &opts, out: work, total: 0, sums: rp.report.Inputs}
	for _, in := range inputs {
		if in.Size < 0 || rd.total < 0 {
			rd.total = -1
		} else {
			rd.total += in.Size
		}
	}
	if opts.Progress != nil {
		rd.progress = func(read int64) {
			opts.Progress(Progress{Read: read, Total: rd.total, Requests: rp.decided.Load()})
		}
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(work)
		if err := rd.run(ctx, inputs); err != nil {
			cancel(err)
		}
	})
	var workersWG sync.WaitGroup
	p := newParser(pol, &opts)
	for range workers {
		workersWG.Go(func() {
			for b := range work {
				p.batch(b)
				select {
				case done <- b:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	wg.Go(func() {
		workersWG.Wait()
		close(done)
	})

	// Batches come back in any order; decide them in the order read.
	pending := map[int64]*batch{}
	var next int64
	for b := range done {
		if ctx.Err() != nil {
			continue // drain, so that the workers finish
		}
		pending[b.seq] = b
		for b := pending[next]; b != nil; b = pending[next] {
			delete(pending, next)
			next++
			if err := rp.batch(b); err != nil {
				cancel(err)
				break
			}
		}
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		rp.abort()
		return nil, err
	}
	if err := rp.finish(); err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Read: rd.read.Load(), Total: rd.total, Requests: rp.decided.Load()})
	}
	return rp.report, nil
}

// item is a request as a worker leaves it for the merger.
type item struct {
	num  int64
	err  error // malformed: nothing else is set
	e    entry
	rule *policy.Rule // nil: no rule governs the request
	// For a governed request: the Request of the engine and the
	// fingerprint.Request it was computed from, or why there is none.
	req policy.Request
	// own is what is kept of a request with a key: its
	// fingerprint.Request, copied out of the batch; pk its primary
	// storage key.
	own     fingerprint.Request
	pk      string
	invalid string // non-empty: the request is answered with a 4xx problem, and why
	status  int    // the 4xx of an invalid request
	// defaultTenant: the request got DefaultTenant.
	defaultTenant bool
	key           string // for a request no rule governs: its key, if any
}

// parser turns records into items; it is shared by the workers.
type parser struct {
	pol        *policy.Policy
	opts       *Options
	keyHeaders []string // the key headers of the policy's rules, for requests no rule governs
	specs      sync.Map // *policy.Rule → *specNames
}

func (p *parser) specNames(rule *policy.Rule) *specNames {
	if sp, ok := p.specs.Load(rule); ok {
		return sp.(*specNames)
	}
	sp, _ := p.specs.LoadOrStore(rule, newSpecNames(rule))
	return sp.(*specNames)
}

func newParser(pol *policy.Policy, opts *Options) *parser {
	p := &parser{pol: pol, opts: opts, keyHeaders: []string{"Idempotency-Key"}}
	for _, r := range pol.Rules() {
		if !contains(p.keyHeaders, r.KeyHeader()) {
			p.keyHeaders = append(p.keyHeaders, r.KeyHeader())
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// batch parses and fingerprints every record of b.
func (p *parser) batch(b *batch) {
	var text string
	if !b.har && len(b.data) > 0 {
		// gjson reads strings. b.data is never written again once the
		// reader sent the batch, so it is read as a string in place.
		text = unsafe.String(&b.data[0], len(b.data))
	}
	b.items = slices.Grow(b.items[:0], len(b.recs))[:len(b.recs)]
	for i, rec := range b.recs {
		it := &b.items[i]
		it.num = rec.num
		if rec.err != nil {
			it.err = rec.err
			continue
		}
		var checkBody bool
		if b.har {
			it.e, it.err = parseHAREntry(b.data[rec.start:rec.end])
		} else {
			it.e, checkBody, it.err = parseLine(text[rec.start:rec.end], b.data[rec.start:rec.end])
		}
		if it.err == nil {
			p.govern(it)
		}
		// A body the fingerprint did not read is checked here: the
		// line must be JSON whatever the policy does with it.
		if it.err == nil && checkBody && it.req.Fingerprint.IsZero() && !gjson.ValidBytes(it.e.body) {
			*it = item{num: rec.num, err: malformed("not a JSON text")}
		}
	}
}

// govern finds the rule of it and computes its Request as a server would.
func (p *parser) govern(it *item) {
	e := &it.e
	tenant := e.tenant
	if h := p.opts.TenantHeader; h != "" {
		tenant = e.header.Get(h)
		if http.CanonicalHeaderKey(h) == "Host" {
			tenant = e.host
		}
	} else if tenant == "" {
		tenant, it.defaultTenant = DefaultTenant, true
	}
	rule, ok := p.pol.Match(e.method, e.url.Path)
	if !ok {
		for _, h := range p.keyHeaders {
			if v := e.header.Values(h); len(v) > 0 {
				it.key = h + ": " + v[0]
				break
			}
		}
		it.req.Tenant = tenant
		return
	}
	it.rule = rule
	if tenant == "" {
		it.invalid, it.status = "no tenant: no "+p.opts.TenantHeader+" header", http.StatusBadRequest
		return
	}
	hasKey := len(e.header.Values(rule.KeyHeader())) > 0
	if hasKey && len(e.body) > p.opts.maxBody() {
		it.invalid, it.status = "body larger than "+strconv.Itoa(p.opts.maxBody())+" bytes", http.StatusRequestEntityTooLarge
		return
	}
	hr := &http.Request{Method: e.method, URL: e.url, Header: e.header, Host: e.host}
	fr, err := rule.Fingerprinter().HTTPRequest(hr, e.body)
	if err == nil {
		it.req, err = newRequest(rule, tenant, fr)
	}
	if err != nil {
		it.invalid, it.status = invalidReason(err), http.StatusBadRequest
		return
	}
	if !it.req.Fingerprint.IsZero() {
		// What the decisions keep, prepared here, in parallel.
		it.own = p.specNames(rule).own(fr)
		it.pk, _, _ = rule.StorageKeys(it.req) // "" for a malformed key, which is decided without it
	}
}

// newRequest is rule.NewRequest(tenant, fr): what a server computes, the
// same way. The tenant and the key are copied first: records keep them,
// and they must not hold on to the batch they were read in. The copies of
// the key replace its values in fr.Header, which is the entry's own (or
// HTTPRequest's copy of it): equal strings, in one allocation.
func newRequest(rule *policy.Rule, tenant string, fr fingerprint.Request) (policy.Request, error) {
	name := rule.KeyHeader() // header names are in canonical form (entry.addHeader)
	if values := fr.Header[name]; len(values) > 0 {
		n := len(tenant)
		for _, k := range values {
			n += len(k)
		}
		var b strings.Builder
		b.Grow(n)
		b.WriteString(tenant)
		for _, k := range values {
			b.WriteString(k)
		}
		all := b.String()
		tenant, all = all[:len(tenant)], all[len(tenant):]
		for i, k := range values {
			values[i], all = all[:len(k)], all[len(k):]
		}
	}
	return rule.NewRequest(tenant, fr)
}

// invalidReason names the class of a fingerprinting error, without the
// request's content, so that reasons can be counted.
func invalidReason(err error) string {
	var re *fingerprint.RequestError
	switch {
	case errors.As(err, &re) && errors.Is(err, fingerprint.ErrMissingRequired):
		return "required value missing: " + re.Name
	case re != nil:
		return "invalid " + re.Part
	}
	return "body is not strict JSON"
}
