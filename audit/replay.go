package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// UnruledWindow is how long a key on a route that no rule governs counts
// as reused when it comes back: the default TTL of a policy.
const UnruledWindow = 24 * time.Hour

// Bounds on what the report tracks, so that a hostile log cannot grow it.
const (
	maxExamples = 20   // malformed and late requests listed
	maxRoutes   = 1000 // routes without a rule
	maxReasons  = 64   // reasons of invalid requests per rule
)

// pos locates a request while the run goes on; ref turns it into a Ref.
type pos struct {
	input int32
	har   bool
	num   int64
}

// snapshot is what is kept of a request to compare it later: its
// fingerprint.Request, owning its memory.
type snapshot struct {
	at pos
	fr fingerprint.Request
	// intent is fr's intent document when the rule stores it (the
	// record's, shared and never written), else nil.
	intent []byte
}

// keyState is what the replay keeps of a storage key while its record
// lives, or of a key on a route without a rule during UnruledWindow.
type keyState struct {
	creator *snapshot // the request that made the record; nil for none
	expires time.Time // when the state is dropped
	uses    int64     // requests in the window (primary keys only)
	first   pos
	// dropped: the state is no longer in its map. Until then it is there
	// under the one key it was put under, which its expiring entries name.
	dropped bool
}

// replayer decides the requests in time order against one in-memory store
// and counts what happens; it runs on Run's goroutine.
type replayer struct {
	ctx    context.Context
	opts   *Options
	mem    *store.Memory
	clock  time.Time // the store's clock: the time of the request or completion at hand
	report *Report
	names  []string

	decided atomic.Int64
	rules   map[*policy.Rule]*ruleStats
	order   []*policy.Rule // the policy's rules, for the report's order

	waiting reorder // read, not decided yet
	arrival int64
	latest  time.Time // the latest time read
	last    time.Time // the time of the last request decided
	window  time.Duration
	maxWait int

	keys    map[string]*keyState // by storage key
	unruled map[string]*keyState // by tenant, request line and key
	routes  map[string]*RouteReport
	// expiry holds, per window length (a rule's TTL, UnruledWindow), when
	// states may be dropped. Every end is pushed at a log time x as x
	// plus the length, and log times only grow, so each is in order.
	expiry map[time.Duration]*fifo[expiring]
	queues []*fifo[expiring] // those of expiry, to go through without a map iteration
	done   queue[*completion]
	seq    int64
	// spare holds completions done with, for reuse.
	spare []*completion

	pairs    chan pairJob
	analyzed chan struct{}
}

func newReplayer(ctx context.Context, pol *policy.Policy, opts *Options, inputs []Input) (*replayer, error) {
	r := &replayer{
		ctx: ctx, opts: opts,
		report:  &Report{Inputs: make([]InputSummary, len(inputs)), TenantHeader: opts.TenantHeader},
		rules:   map[*policy.Rule]*ruleStats{},
		order:   pol.Rules(),
		window:  opts.ReorderWindow,
		maxWait: opts.ReorderRequests,
		keys:    map[string]*keyState{},
		unruled: map[string]*keyState{},
		routes:  map[string]*RouteReport{},
		expiry:  map[time.Duration]*fifo[expiring]{},
		pairs:   make(chan pairJob, 1024),
		waiting: reorder{others: queue[waiting]{less: waitingBefore}},
		done:    queue[*completion]{less: completionBefore},
	}
	if r.window <= 0 {
		r.window = DefaultReorderWindow
	}
	if r.maxWait <= 0 {
		r.maxWait = DefaultReorderRequests
	}
	r.report.ReorderWindow, r.report.ReorderRequests = duration(r.window), r.maxWait
	for i, in := range inputs {
		r.names = append(r.names, in.Name)
		r.report.Inputs[i] = InputSummary{Name: in.Name}
	}
	var err error
	r.mem, err = store.NewMemory(store.MemoryOptions{
		MaxRecords: orDefault(opts.MaxKeys, DefaultMaxKeys),
		Clock:      func() time.Time { return r.clock },
	})
	if err != nil {
		return nil, err
	}
	r.analyzed = make(chan struct{})
	go func() {
		defer close(r.analyzed)
		for j := range r.pairs {
			j.an.pair(j)
		}
	}()
	return r, nil
}

func (r *replayer) ref(p pos) Ref {
	ref := Ref{Input: r.names[p.input]}
	if p.har {
		ref.Pointer = fmt.Sprintf("/log/entries/%d", p.num)
	} else {
		ref.Line = p.num
	}
	return ref
}

// abort stops the analyzer of a run that failed.
func (r *replayer) abort() {
	close(r.pairs)
	<-r.analyzed
}

// batch takes the items of b, in log order, into the reordering heap and
// decides those whose time has come.
func (r *replayer) batch(b *batch) error {
	b.waiting++ // held while its items are read
	for i := range b.items {
		it := &b.items[i]
		at := pos{input: b.input, har: b.har, num: it.num}
		if it.err != nil {
			if err := r.malformed(at, it.err); err != nil {
				return err
			}
			continue
		}
		if it.e.t.Before(r.last) {
			r.report.Late++
			if r.opts.Strict {
				return &Error{Where: r.ref(at), Err: &detail{ErrLate, "timed " + r.last.Sub(it.e.t).String() + " before a request already decided"}}
			}
			if len(r.report.LateRequests) < maxExamples {
				r.report.LateRequests = append(r.report.LateRequests, r.ref(at))
			}
			continue
		}
		r.arrival++
		b.waiting++
		r.waiting.push(waiting{it: it, b: b, at: at, n: r.arrival})
		if it.e.t.After(r.latest) {
			r.latest = it.e.t
		}
		for r.waiting.len() > 0 && (r.latest.Sub(r.waiting.first().it.e.t) > r.window || r.waiting.len() > r.maxWait) {
			if err := r.decide(r.waiting.pop()); err != nil {
				return err
			}
		}
	}
	if b.waiting--; b.waiting == 0 {
		b.release()
	}
	return nil
}

func (r *replayer) malformed(at pos, err error) error {
	r.report.Malformed++
	if r.opts.Strict {
		return &Error{Where: r.ref(at), Err: err}
	}
	if len(r.report.MalformedRequests) < maxExamples {
		r.report.MalformedRequests = append(r.report.MalformedRequests, InputProblem{Where: r.ref(at), Error: err.Error()})
	}
	return nil
}

// finish decides what waits, completes what runs, and computes the
// report.
func (r *replayer) finish() error {
	for r.waiting.len() > 0 {
		if err := r.decide(r.waiting.pop()); err != nil {
			r.abort()
			return err
		}
	}
	for !r.done.empty() {
		if err := r.completeQueued(r.done.pop()); err != nil {
			r.abort()
			return err
		}
	}
	close(r.pairs)
	<-r.analyzed
	r.report.Rules = r.report.Rules[:0]
	for _, rule := range r.ruleOrder() {
		r.report.Rules = append(r.report.Rules, r.rules[rule].finish(r.ref))
	}
	r.report.Unruled = sortedRoutes(r.routes)
	if r.report.MalformedRequests == nil {
		r.report.MalformedRequests = []InputProblem{}
	}
	if r.report.LateRequests == nil {
		r.report.LateRequests = []Ref{}
	}
	return nil
}

// ruleOrder lists the rules that governed requests: the policy's in
// document order, then the defaults' by method.
func (r *replayer) ruleOrder() []*policy.Rule {
	var out, defaults []*policy.Rule
	for _, rule := range r.order {
		if r.rules[rule] != nil {
			out = append(out, rule)
		}
	}
	for rule := range r.rules {
		if !slices.Contains(r.order, rule) {
			defaults = append(defaults, rule)
		}
	}
	sortRules(defaults)
	return append(out, defaults...)
}

// advance brings the store's clock to t: it completes, in time order,
// the requests whose handlers finished by t, and forgets the keys whose
// window closed.
func (r *replayer) advance(t time.Time) error {
	for !r.done.empty() && !r.done.first().at.After(t) {
		if err := r.completeQueued(r.done.pop()); err != nil {
			return err
		}
	}
	r.clock = t
	for _, q := range r.queues {
		for q.len() > 0 && !q.front().at.After(t) {
			e := q.pop()
			if !e.st.dropped && e.st.expires.After(e.at) {
				continue // e.st is still the state under e.key, and was extended
			}
			m := r.keys
			if e.unruled {
				m = r.unruled
			}
			if st := m[e.key]; st != nil && !st.expires.After(e.at) {
				st.dropped = true
				delete(m, e.key)
			}
		}
	}
	return nil
}

// decide gives one request to the engine, through store.Acquire, at its
// time.
func (r *replayer) decide(w waiting) error {
	err := r.decideItem(w)
	if w.b.waiting--; w.b.waiting == 0 && err == nil {
		w.b.release()
	}
	return err
}

func (r *replayer) decideItem(w waiting) error {
	it, t := w.it, w.it.e.t
	if err := r.advance(t); err != nil {
		return err
	}
	r.last = t
	if r.report.From.IsZero() {
		r.report.From = t
	}
	r.report.To = t
	r.decided.Add(1)
	r.report.Requests++
	if it.defaultTenant {
		r.report.DefaultTenant++
	}
	if it.rule == nil {
		r.unruledRequest(w)
		return nil
	}
	rs := r.stats(it.rule)
	rs.rep.Requests++
	if it.invalid != "" {
		rs.invalidRequest(it)
		return nil
	}
	claim, err := store.Acquire(r.ctx, r.mem, it.rule, it.req)
	if err != nil {
		return fmt.Errorf("audit: %s: %w", r.ref(w.at), err)
	}
	d := claim.Decision
	rs.count(d)
	if d.Reason == policy.ReasonMissingKey || d.Reason == policy.ReasonMalformedKey {
		return nil
	}
	pk := it.pk
	ks := r.live(r.keys, pk, t)
	var snap *snapshot
	if ks == nil {
		// A new key's state and its request's snapshot, most often its
		// creator, in one allocation.
		both := &struct {
			keyState
			snapshot
		}{keyState: keyState{uses: 1, first: w.at}}
		ks, snap = &both.keyState, &both.snapshot
		r.keys[pk] = ks
		r.extend(pk, ks, t.Add(it.rule.TTL()), it.rule.TTL(), false)
		rs.rep.Keys++
	} else if ks.uses++; ks.uses == 2 {
		rs.rep.KeysReused++
	}

	// The request made the record the engine compared with, or, after a
	// release, the one before it under the key: the analyzer compares
	// their bodies.
	from := ks
	switch d.Reason {
	case policy.ReasonRetry:
		from = r.live(r.keys, d.StorageKey, t)
	case policy.ReasonOtherRoute, policy.ReasonSpecChanged:
		from = nil
	}
	if snap == nil {
		snap = new(snapshot)
	}
	*snap = snapshot{at: w.at, fr: it.own, intent: it.req.Intent}
	if from != nil && from.creator != nil && (d.Reason == policy.ReasonMismatch || !bytes.Equal(from.creator.fr.Body, it.own.Body)) {
		select {
		case r.pairs <- pairJob{an: rs.an, reason: d.Reason, a: from.creator, b: snap}:
		case <-r.ctx.Done():
			return context.Cause(r.ctx)
		}
	}

	if d.Action != policy.Execute && d.Action != policy.ExecuteAsNew {
		return nil
	}
	st := ks
	if d.StorageKey != pk {
		if st = r.live(r.keys, d.StorageKey, t); st == nil {
			st = &keyState{first: w.at}
			r.keys[d.StorageKey] = st
		}
	}
	st.creator = snap
	r.extend(d.StorageKey, st, lifeEnd(&claim.Record), it.rule.TTL(), false)
	status := it.e.status
	if status == 0 {
		status = rs.assumedStatus()
		r.report.AssumedStatus++
	}
	if it.e.dur == 0 {
		c := completion{at: t, rs: rs, rec: claim.Record, status: status}
		return r.complete(&c)
	}
	var c *completion
	if n := len(r.spare); n > 0 {
		c, r.spare = r.spare[n-1], r.spare[:n-1]
	} else {
		c = new(completion)
	}
	r.seq++
	*c = completion{at: t.Add(it.e.dur), seq: r.seq, rs: rs, rec: claim.Record, status: status}
	r.done.push(c)
	return nil
}

// completeQueued completes c, taken from r.done, and keeps it for reuse.
func (r *replayer) completeQueued(c *completion) error {
	err := r.complete(c)
	*c = completion{}
	r.spare = append(r.spare, c)
	return err
}

// complete writes the completion of a reservation, as the middleware does
// once the handler answered. The log has no response headers: the response
// has none, and its record stores none (a nil header, which the store
// takes as an empty one).
func (r *replayer) complete(c *completion) error {
	r.clock = c.at
	rec, err := c.rs.rule.Complete(&c.rec, policy.Response{Status: c.status}, c.at)
	if err != nil {
		return err
	}
	if err := r.mem.Write(r.ctx, rec, store.Guard{}); err != nil {
		if errors.Is(err, store.ErrConflict) { // taken over after its lease
			c.rs.rep.LateCompletions++
			return nil
		}
		return err
	}
	if st := r.keys[rec.StorageKey]; st != nil {
		r.extend(rec.StorageKey, st, lifeEnd(&rec), c.rs.rule.TTL(), false)
	}
	return nil
}

// live returns the state under key in m unless its window closed by t;
// a closed one is dropped.
func (r *replayer) live(m map[string]*keyState, key string, t time.Time) *keyState {
	st := m[key]
	if st != nil && !t.Before(st.expires) {
		st.dropped = true
		delete(m, key)
		return nil
	}
	return st
}

// extend keeps st until end at least; window is the length of the
// window that ends there.
func (r *replayer) extend(key string, st *keyState, end time.Time, window time.Duration, unruled bool) {
	end = end.Truncate(time.Microsecond) // as the store keeps times
	if end.After(st.expires) {
		st.expires = end
		q := r.expiry[window]
		if q == nil {
			q = &fifo[expiring]{}
			r.expiry[window] = q
			r.queues = append(r.queues, q)
		}
		q.push(expiring{at: end, key: key, st: st, unruled: unruled})
	}
}

// lifeEnd returns when a record stops binding its key, as the store
// judges it.
func lifeEnd(rec *policy.Record) time.Time {
	if rec.LeaseExpiry.After(rec.ExpiresAt) {
		return rec.LeaseExpiry
	}
	return rec.ExpiresAt
}

// unruledRequest counts a request that no rule governs and, when it has a
// key, whether the key comes back on the same request line.
func (r *replayer) unruledRequest(w waiting) {
	it := w.it
	r.report.NoRule++
	if it.key == "" {
		return
	}
	route := it.e.method + " " + pathShape(it.e.url.Path)
	rr := r.routes[route]
	if rr == nil {
		if len(r.routes) >= maxRoutes {
			r.report.UnruledOverflow++
			return
		}
		rr = &RouteReport{Route: route}
		r.routes[route] = rr
	}
	rr.Requests++
	uk := it.req.Tenant + "\x00" + it.e.method + " " + it.e.url.Path + "\x00" + it.key
	st := r.live(r.unruled, uk, it.e.t)
	if st == nil {
		st = &keyState{uses: 1, first: w.at}
		r.unruled[uk] = st
		r.extend(uk, st, it.e.t.Add(UnruledWindow), UnruledWindow, true)
		rr.Keys++
		return
	}
	if st.uses++; st.uses == 2 {
		rr.KeysReused++
		if rr.Example == nil {
			rr.Example = []Ref{r.ref(st.first), r.ref(w.at)}
		}
	}
}

// pathShape erases the segments of a path that hold a digit, which are
// most often identifiers, except API versions ("v1"):
// "/v1/customers/cus_123/cards" is "/v1/customers/{}/cards".
func pathShape(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		version := len(s) > 1 && s[0] == 'v' && strings.Trim(s[1:], "0123456789") == ""
		if !version && strings.ContainsAny(s, "0123456789") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// own returns a copy of fr that shares no memory with the batch it was
// read in, holding only what the spec reads: the headers and query
// parameters it names, and the body. Its strings are cut from one copy.
func (sp *specNames) own(fr fingerprint.Request) fingerprint.Request {
	n := len(fr.Method) + len(fr.Path)
	for _, name := range sp.headers {
		for _, x := range fr.Header.Values(name) {
			n += len(x)
		}
	}
	if len(fr.Query) > 0 {
		for _, name := range sp.query {
			for _, x := range fr.Query[name] {
				n += len(name) + len(x)
			}
		}
	}
	var b strings.Builder
	b.Grow(n)
	str := func(s string) string {
		at := b.Len()
		b.WriteString(s)
		return b.String()[at:]
	}
	out := fingerprint.Request{
		Method: str(fr.Method),
		Path:   str(fr.Path),
		Body:   bytes.Clone(fr.Body),
	}
	for _, name := range sp.headers {
		if v := fr.Header.Values(name); len(v) > 0 {
			if out.Header == nil {
				out.Header = http.Header{}
			}
			for _, x := range v {
				out.Header.Add(name, str(x))
			}
		}
	}
	if len(fr.Query) > 0 && len(sp.query) > 0 {
		out.Query = url.Values{}
		for _, name := range sp.query {
			for _, x := range fr.Query[name] {
				out.Query.Add(str(name), str(x))
			}
		}
	}
	return out
}

// specNames are the headers, in canonical form, and the query parameters
// that a rule's spec reads.
type specNames struct {
	headers, query []string
}

func newSpecNames(rule *policy.Rule) *specNames {
	spec := rule.Fingerprinter().Spec()
	sp := &specNames{query: spec.Query}
	for _, h := range spec.Headers {
		sp.headers = append(sp.headers, http.CanonicalHeaderKey(h))
	}
	return sp
}

// waiting is a request read and not decided yet.
type waiting struct {
	it *item
	b  *batch // which holds it
	at pos
	n  int64 // order of reading, which breaks ties of time
}

// completion is a handler that finishes at a time: its reservation is
// completed with the logged status then.
type completion struct {
	at     time.Time
	seq    int64
	rs     *ruleStats
	rec    policy.Record
	status int
}

// expiring is when a key's state may be dropped: st, under key.
type expiring struct {
	at      time.Time
	key     string
	st      *keyState
	unruled bool
}

// fifoBlock is the number of items in a block of a fifo.
const fifoBlock = 1024

// fifo is a first-in first-out queue, in blocks of fifoBlock items: it
// grows without copying what it holds, and gives back the memory of what
// it popped a block at a time. The zero value is an empty queue.
type fifo[T any] struct {
	blocks []*[fifoBlock]T
	head   int // the index of the front in blocks[0]
	n      int
	spare  *[fifoBlock]T // an empty block, kept for the next one needed
}

func (f *fifo[T]) len() int { return f.n }
func (f *fifo[T]) front() T { return f.blocks[0][f.head] }
func (f *fifo[T]) back() T {
	i := f.head + f.n - 1
	return f.blocks[i/fifoBlock][i%fifoBlock]
}

func (f *fifo[T]) push(x T) {
	i := f.head + f.n
	if i/fifoBlock == len(f.blocks) {
		b := f.spare
		if b == nil {
			b = new([fifoBlock]T)
		}
		f.spare = nil
		f.blocks = append(f.blocks, b)
	}
	f.blocks[i/fifoBlock][i%fifoBlock] = x
	f.n++
}

func (f *fifo[T]) pop() T {
	var zero T
	b := f.blocks[0]
	x := b[f.head]
	b[f.head] = zero
	f.head++
	f.n--
	switch {
	case f.head == fifoBlock: // blocks[0] is empty
		f.spare = b
		n := copy(f.blocks, f.blocks[1:])
		f.blocks[n] = nil
		f.blocks = f.blocks[:n]
		f.head = 0
	case f.n == 0:
		f.head = 0
	}
	return x
}

// reorder holds the requests read and not decided yet, earliest first:
// those read in time order in a fifo, the others in a heap.
type reorder struct {
	inOrder fifo[waiting]
	others  queue[waiting]
}

func (q *reorder) len() int { return q.inOrder.len() + q.others.len() }

func (q *reorder) push(w waiting) {
	if q.inOrder.len() == 0 || !waitingBefore(w, q.inOrder.back()) {
		q.inOrder.push(w)
		return
	}
	q.others.push(w)
}

// first returns the earliest request; q must not be empty.
func (q *reorder) first() waiting {
	switch {
	case q.others.empty():
		return q.inOrder.front()
	case q.inOrder.len() == 0 || waitingBefore(q.others.first(), q.inOrder.front()):
		return q.others.first()
	}
	return q.inOrder.front()
}

func (q *reorder) pop() waiting {
	if q.others.empty() || q.inOrder.len() > 0 && !waitingBefore(q.others.first(), q.inOrder.front()) {
		return q.inOrder.pop()
	}
	return q.others.pop()
}

// queue is a priority queue of T ordered by less: a binary heap on a
// slice, without the boxing of container/heap's interface.
type queue[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (q *queue[T]) len() int    { return len(q.items) }
func (q *queue[T]) first() T    { return q.items[0] }
func (q *queue[T]) empty() bool { return len(q.items) == 0 }

func (q *queue[T]) push(x T) {
	q.items = append(q.items, x)
	// Up: as container/heap.
	j := len(q.items) - 1
	for j > 0 {
		i := (j - 1) / 2 // parent
		if i == j || !q.less(q.items[j], q.items[i]) {
			break
		}
		q.items[i], q.items[j] = q.items[j], q.items[i]
		j = i
	}
}

func (q *queue[T]) pop() T {
	var zero T
	n := len(q.items) - 1
	q.items[0], q.items[n] = q.items[n], q.items[0]
	// Down: as container/heap, over the first n items.
	i := 0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 {
			break
		}
		j := j1 // left child
		if j2 := j1 + 1; j2 < n && q.less(q.items[j2], q.items[j1]) {
			j = j2 // right child
		}
		if !q.less(q.items[j], q.items[i]) {
			break
		}
		q.items[i], q.items[j] = q.items[j], q.items[i]
		i = j
	}
	x := q.items[n]
	q.items[n] = zero
	q.items = q.items[:n]
	return x
}

func waitingBefore(a, b waiting) bool {
	if c := a.it.e.t.Compare(b.it.e.t); c != 0 {
		return c < 0
	}
	return a.n < b.n
}

func completionBefore(a, b *completion) bool {
	if c := a.at.Compare(b.at); c != 0 {
		return c < 0
	}
	return a.seq < b.seq
}
