package policy_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/commands"
	"github.com/leanovate/gopter/gen"
)

// The stateful property test drives the engine with random interleavings of
// requests, completions, crashes, clock jumps, deploys that change the
// fingerprint spec or rename a route parameter, and races in which a
// reservation loses and reads the winner's records. The store is a map with
// conditional writes. Alongside it, the system keeps a ghost of what each
// storage key holds, computed from the requests it sent and the test's own
// clock and durations, never from the engine's records; every decision is
// checked against the ghosts of both of the request's keys, and every
// execution against the ghosts of all keys: an operation (tenant, key,
// spec, fingerprint) never starts while a record of it binds elsewhere,
// which is what a request that executed as new meets when the primary
// record it was new against is released or expires.

const (
	propTTL   = time.Hour
	propLease = 30 * time.Second
)

// propPolicy returns the test policy. Version 1 differs from 0 in its
// fingerprint spec, so that a deploy to or from it changes every spec
// digest; version 2 only renames the scoped route's parameter. Paths no
// rule matches go to the defaults, which replay on a mismatch: a key used
// on two of them, or on one of them and a rule's route, must never replay
// one endpoint's response to the other.
func propPolicy(t testing.TB, version int) *policy.Policy {
	ignore, param := `["traceId"]`, "id"
	switch version {
	case 1:
		ignore = `["traceId", "note"]`
	case 2:
		param = "sid"
	}
	common := `"ttl": "1h", "lease": "30s", "fingerprint": {"ignore": ` + ignore + `}`
	return mustParse(t, `{
  "defaults": {"on_mismatch": "replay", "on_spec_change": "replay", `+common+`},
  "rules": [
  {"route": "POST /reject", "on_mismatch": "reject", "on_spec_change": "reject", `+common+`},
  {"route": "POST /replay", "on_mismatch": "replay", "on_spec_change": "replay", `+common+`},
  {"route": "POST /new", "on_mismatch": "new", "on_spec_change": "new", `+common+`},
  {"route": "POST /scoped/{`+param+`}", "scope": {"route": true}, "on_mismatch": "reject", "mismatch_status": 409, `+common+`}
]}`)
}

var (
	propTenants = []string{"acme", "globex"}
	propKeys    = []string{"k1", "k2", `"k1"`, ""} // `"k1"` is k1; "" is no key
	propPaths   = []string{"/reject", "/replay", "/new", "/scoped/a", "/scoped/b", "/orders", "/refunds"}
	// propPathWeights make histories of one endpoint more frequent than
	// keys shared across endpoints, and "new" the most frequent of all.
	propPathWeights = []int{2, 2, 5, 1, 1, 1, 1}
	propAmounts     = []int{1000, 2000}
)

// endpointOf is the endpoint the test expects records to be compared by:
// the rule's route with parameter names erased, or the method and path
// under the defaults.
func endpointOf(rule *policy.Rule, path string) string {
	route := rule.Route()
	if strings.HasSuffix(route, " *") {
		return "POST " + path
	}
	var b strings.Builder
	for skip := false; route != ""; route = route[1:] {
		switch c := route[0]; {
		case c == '{':
			skip = true
			b.WriteString("{}")
		case c == '}':
			skip = false
		case !skip:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// operation names what one execution does: requests of one operation are
// retries of each other.
type operation struct {
	tenant, key, digest string
	fp                  fingerprint.Fingerprint
}

// send is one request of a command.
type send struct {
	Tenant, Key, Path int
	Amount, Trace     int
}

func (s send) String() string {
	return fmt.Sprintf("%s/%s%s/%d", propTenants[s.Tenant], strings.Trim(propKeys[s.Key], `"`), propPaths[s.Path], propAmounts[s.Amount])
}

// ghost is what the test believes a storage key holds.
type ghost struct {
	inFlight          bool
	tenant, key       string
	route, digest     string
	fp                fingerprint.Fingerprint
	leaseUntil, until time.Time
}

// binds reports whether the ghost's record still binds its key at now.
func (g *ghost) binds(now time.Time) bool {
	return g != nil && (now.Before(g.until) || g.inFlight && now.Before(g.leaseUntil))
}

func (g *ghost) op() operation { return operation{g.tenant, g.key, g.digest, g.fp} }

// origin is who produced a stored response body.
type origin struct {
	tenant, key, route, digest string
	fp                         fingerprint.Fingerprint
}

// execution is a handler that holds a reservation.
type execution struct {
	rule       *policy.Rule
	res        policy.Record
	req        policy.Request
	route      string
	leaseUntil time.Time
}

// sent is a request as the system sends it, with what the test knows of it.
type sent struct {
	rule  *policy.Rule
	req   policy.Request
	key   string // the key's content; "" for none
	route string // its endpoint
}

// system is the system under test: the engine, a map store and the ghost.
type system struct {
	t        testing.TB
	policies [3]*policy.Policy
	version  int
	now      time.Time
	store    map[string]policy.Record
	ghosts   map[string]ghost
	lastUse  map[string]time.Time // storage key: last write
	origins  map[string]origin    // response body: who produced it
	pending  []*execution
	seq      int
	failures []string
}

func (s *system) fail(format string, args ...any) {
	s.failures = append(s.failures, fmt.Sprintf(format, args...))
}

// write stores rec if the stored generation is rec.Generation-1 (none for 1).
func (s *system) write(rec policy.Record) bool {
	cur, ok := s.store[rec.StorageKey]
	if rec.Generation == 1 && ok || rec.Generation > 1 && (!ok || cur.Generation != rec.Generation-1) {
		return false
	}
	s.store[rec.StorageKey] = rec
	return true
}

func (s *system) request(c send) sent {
	path := propPaths[c.Path]
	rule, ok := s.policies[s.version].Match("POST", path)
	if !ok {
		s.t.Fatalf("no rule for %s", path)
	}
	h := http.Header{}
	if k := propKeys[c.Key]; k != "" {
		h.Set(rule.KeyHeader(), k)
	}
	body := fmt.Sprintf(`{"amountCents":%d,"traceId":"t%d","note":"n%d"}`, propAmounts[c.Amount], c.Trace, c.Trace)
	req, err := rule.NewRequest(propTenants[c.Tenant], fingerprint.Request{Method: "POST", Path: path, Header: h, Body: []byte(body)})
	if err != nil {
		s.t.Fatal(err)
	}
	return sent{rule, req, strings.Trim(propKeys[c.Key], `"`), endpointOf(rule, path)}
}

// view is what a request reads: the records and ghosts of its two keys.
type view struct {
	primary, created   *policy.Record
	gPrimary, gCreated *ghost
}

func (s *system) read(pk, nk string) view {
	get := func(sk string) (*policy.Record, *ghost) {
		if sk == "" {
			return nil, nil
		}
		var rec *policy.Record
		if r, ok := s.store[sk]; ok {
			rec = &r
		}
		var g *ghost
		if gh, ok := s.ghosts[sk]; ok {
			g = &gh
		}
		return rec, g
	}
	var v view
	v.primary, v.gPrimary = get(pk)
	v.created, v.gCreated = get(nk)
	return v
}

// handle runs the decision loop for one request. With a stale snapshot
// (a race's loser), the first decision is made on it.
func (s *system) handle(c send, snapshot *view) {
	r := s.request(c)
	pk, nk, keyErr := r.rule.StorageKeys(r.req)
	var v view
	expired := false
	if keyErr == nil {
		if snapshot == nil {
			v = s.read(pk, nk)
		} else {
			v = *snapshot
		}
		expired = snapshot == nil
		for _, sk := range []string{pk, nk} {
			if used, ok := s.lastUse[sk]; ok && sk != "" && s.now.Before(used.Add(propTTL)) {
				expired = false
			}
		}
	}
	for step := 0; ; step++ {
		before := len(s.store)
		snap := fmt.Sprint(s.store)
		d, err := r.rule.Decide(r.req, v.primary, v.created, s.now)
		if err != nil {
			s.fail("%v: Decide: %v", c, err)
			return
		}
		s.check(c, r, pk, nk, v, d)
		if step == 0 && expired && (d.Action != policy.Execute || d.StorageKey != pk) {
			s.fail("%v: both keys were last used a TTL ago or never, yet %v (%v) at %s", c, d.Action, d.Reason, d.StorageKey)
		}
		if d.Action != policy.Execute && d.Action != policy.ExecuteAsNew {
			if d.Reserve != nil {
				s.fail("%v: %v reserves %+v", c, d.Action, d.Reserve)
			}
			if len(s.store) != before || fmt.Sprint(s.store) != snap {
				s.fail("%v: %v wrote to the store", c, d.Action)
			}
			return
		}
		if s.write(*d.Reserve) {
			s.reserved(c, r, *d.Reserve)
			return
		}
		if step == 3 {
			s.fail("%v: the decision loop does not end", c)
			return
		}
		v = s.read(pk, nk) // lost the race: decide on the winner's records
	}
}

// reserved records a successful reservation in the ghost and starts its
// handler, after checking that no record of the same operation binds
// another key: an operation runs once while its record binds.
func (s *system) reserved(c send, r sent, res policy.Record) {
	g := ghost{
		inFlight: true, tenant: r.req.Tenant, key: r.key, route: r.route, digest: r.rule.Fingerprinter().SpecDigest(),
		fp: r.req.Fingerprint, leaseUntil: s.now.Add(propLease), until: s.now.Add(propTTL),
	}
	for sk, other := range s.ghosts {
		if sk != res.StorageKey && other.op() == g.op() && other.binds(s.now) {
			s.fail("%v: executes at %s while a record of the same operation binds %s (in flight %v)", c, res.StorageKey, sk, other.inFlight)
		}
	}
	s.ghosts[res.StorageKey] = g
	s.lastUse[res.StorageKey] = s.now
	s.pending = append(s.pending, &execution{rule: r.rule, res: res, req: r.req, route: r.route, leaseUntil: s.now.Add(propLease)})
}

// check holds every decision to the ghosts of the request's two keys.
func (s *system) check(c send, r sent, pk, nk string, v view, d policy.Decision) {
	if r.key == "" {
		if d.Action != policy.Reject || d.Reason != policy.ReasonMissingKey || d.Response.Status != 400 {
			s.fail("%v: no key, yet %v %v %d", c, d.Action, d.Reason, d.Response.Status)
		}
		return
	}
	digest := r.rule.Fingerprinter().SpecDigest()
	// The request's own record under its new identity comes first.
	if g := v.gCreated; g.binds(s.now) {
		if g.op() != (operation{r.req.Tenant, r.key, digest, r.req.Fingerprint}) {
			s.fail("%v: the record at its new identity %s is of another operation", c, nk)
		}
		running := g.inFlight && s.now.Before(g.leaseUntil)
		want := policy.Replay
		switch {
		case running:
			want = policy.Reject
		case g.inFlight:
			want = policy.ExecuteAsNew // a takeover of its own stale reservation
		}
		if d.Reason != policy.ReasonRetry || d.Action != want || d.StorageKey != nk {
			s.fail("%v: its record as new binds %s, yet %v %v at %s; want %v retry", c, nk, d.Action, d.Reason, d.StorageKey, want)
		}
		s.checkReplay(c, r, digest, d)
		return
	}
	g := v.gPrimary
	if !g.binds(s.now) {
		if d.Reason != policy.ReasonFirst || d.Action != policy.Execute || d.StorageKey != pk {
			s.fail("%v: nothing binds %s or its new identity, yet %v %v at %s", c, pk, d.Action, d.Reason, d.StorageKey)
		}
		return
	}
	want := policy.ReasonMismatch
	switch {
	case g.digest == digest && g.fp == r.req.Fingerprint:
		want = policy.ReasonRetry
	case g.route != r.route:
		want = policy.ReasonOtherRoute
	case g.digest != digest:
		want = policy.ReasonSpecChanged
	}
	if g.tenant != r.req.Tenant || g.key != r.key {
		s.fail("%v: the record at %s belongs to %s/%s", c, pk, g.tenant, g.key)
	}
	if d.Reason != want {
		s.fail("%v: reason %v, want %v (record in flight %v)", c, d.Reason, want, g.inFlight)
	}
	running := g.inFlight && s.now.Before(g.leaseUntil)
	switch {
	case d.Action == policy.Execute && d.StorageKey != pk, d.Action == policy.ExecuteAsNew && d.StorageKey != nk:
		s.fail("%v: %v at %s, not at its key", c, d.Action, d.StorageKey)
	case d.Action == policy.Execute && running:
		s.fail("%v: executes while %s is in flight", c, pk)
	case d.Action == policy.Execute && want == policy.ReasonMismatch && !(r.rule.OnMismatch() == policy.ResolveReplay && g.inFlight):
		s.fail("%v: executes a mismatching request under %s", c, pk)
	case want == policy.ReasonOtherRoute && (d.Action != policy.Reject || d.Problem.Type != policy.TypeOtherRoute):
		s.fail("%v: a record of %s meets a request to %s with %v", c, g.route, r.route, d.Action)
	case want == policy.ReasonRetry && running && (d.Action != policy.Reject || d.Problem.Type != policy.TypeInFlight):
		s.fail("%v: a retry meets a running reservation with %v", c, d.Action)
	}
	s.checkReplay(c, r, digest, d)
}

// checkReplay holds a replay to the origin of its body.
func (s *system) checkReplay(c send, r sent, digest string, d policy.Decision) {
	if d.Action != policy.Replay {
		return
	}
	o, ok := s.origins[string(d.Response.Body)]
	switch {
	case !ok:
		s.fail("%v: replays %q, which no handler produced", c, d.Response.Body)
	case o.tenant != r.req.Tenant || o.key != r.key:
		s.fail("%v: replays the response of %s/%s", c, o.tenant, o.key)
	case o.route != r.route:
		s.fail("%v: replays to %s the response of %s", c, r.route, o.route)
	case d.Reason == policy.ReasonRetry && (o.fp != r.req.Fingerprint || o.digest != digest):
		s.fail("%v: replays as a retry a response to another request", c)
	case d.Reason == policy.ReasonMismatch && r.rule.OnMismatch() != policy.ResolveReplay,
		d.Reason == policy.ReasonSpecChanged && r.rule.OnSpecChange() != policy.ResolveReplay:
		s.fail("%v: replays on %v although the rule does not say replay", c, d.Reason)
	}
}

// complete finishes the i-th running handler with status.
func (s *system) complete(i, status int) {
	if len(s.pending) == 0 {
		return
	}
	i %= len(s.pending)
	e := s.pending[i]
	s.pending = append(s.pending[:i], s.pending[i+1:]...)
	s.seq++
	body := fmt.Sprintf(`{"response":%d}`, s.seq)
	next, err := e.rule.Complete(&e.res, policy.Response{Status: status, Body: []byte(body)}, s.now)
	if err != nil {
		s.fail("Complete: %v", err)
		return
	}
	ok := s.write(next)
	if !ok && s.now.Before(e.leaseUntil) {
		s.fail("a handler lost its reservation of %s within its lease", e.res.StorageKey)
	}
	if !ok {
		return
	}
	if status == 201 {
		s.origins[body] = origin{tenant: e.req.Tenant, key: e.res.Key, route: e.route, digest: e.rule.Fingerprinter().SpecDigest(), fp: e.req.Fingerprint}
		g := s.ghosts[e.res.StorageKey]
		g.inFlight, g.until = false, s.now.Add(propTTL)
		s.ghosts[e.res.StorageKey] = g
		s.lastUse[e.res.StorageKey] = s.now
	} else {
		delete(s.ghosts, e.res.StorageKey) // released: the key is free
	}
}

// invariants checks what must hold after every command.
func (s *system) invariants() {
	running := map[string]int{}
	for _, e := range s.pending {
		if s.now.Before(e.leaseUntil) {
			running[e.res.StorageKey]++
		}
	}
	for sk, n := range running {
		if n > 1 {
			s.fail("%d executions of %s in flight at once", n, sk)
		}
	}
}

// propCommand is one step of a run.
type propCommand struct {
	name string
	run  func(s *system)
}

func (c *propCommand) Run(sut commands.SystemUnderTest) commands.Result {
	s := sut.(*system)
	s.failures = nil
	c.run(s)
	s.invariants()
	return append([]string(nil), s.failures...)
}
func (c *propCommand) NextState(state commands.State) commands.State { return state }
func (c *propCommand) PreCondition(commands.State) bool              { return true }
func (c *propCommand) PostCondition(_ commands.State, result commands.Result) *gopter.PropResult {
	if failures := result.([]string); len(failures) > 0 {
		return &gopter.PropResult{Status: gopter.PropFalse, Labels: failures}
	}
	return &gopter.PropResult{Status: gopter.PropTrue}
}
func (c *propCommand) String() string { return c.name }

func genPath() gopter.Gen {
	var gens []gen.WeightedGen
	for i, w := range propPathWeights {
		gens = append(gens, gen.WeightedGen{Weight: w, Gen: gen.Const(i)})
	}
	return gen.Weighted(gens)
}

func genSend() gopter.Gen {
	return gopter.CombineGens(
		gen.IntRange(0, len(propTenants)-1), gen.IntRange(0, len(propKeys)-1), genPath(),
		gen.IntRange(0, len(propAmounts)-1), gen.IntRange(0, 2),
	).Map(func(v []any) send {
		return send{Tenant: v[0].(int), Key: v[1].(int), Path: v[2].(int), Amount: v[3].(int), Trace: v[4].(int)}
	})
}

func genCommand() gopter.Gen {
	sendCmd := genSend().Map(func(c send) commands.Command {
		return &propCommand{"send " + c.String(), func(s *system) { s.handle(c, nil) }}
	})
	race := gopter.CombineGens(genSend(), genSend()).Map(func(v []any) commands.Command {
		loser, winner := v[0].(send), v[1].(send)
		return &propCommand{"race " + loser.String() + " loses to " + winner.String(), func(s *system) {
			r := s.request(loser)
			pk, nk, _ := r.rule.StorageKeys(r.req)
			v := s.read(pk, nk) // the loser reads, then the winner goes first
			s.handle(winner, nil)
			s.handle(loser, &v)
		}}
	})
	complete := gopter.CombineGens(gen.IntRange(0, 3), gen.OneConstOf(201, 500)).Map(func(v []any) commands.Command {
		i, status := v[0].(int), v[1].(int)
		return &propCommand{fmt.Sprintf("complete #%d with %d", i, status), func(s *system) { s.complete(i, status) }}
	})
	crash := gen.IntRange(0, 3).Map(func(i int) commands.Command {
		return &propCommand{fmt.Sprintf("crash #%d", i), func(s *system) {
			if len(s.pending) > 0 {
				i %= len(s.pending)
				s.pending = append(s.pending[:i], s.pending[i+1:]...)
			}
		}}
	})
	advance := gen.OneConstOf(time.Second, 5*time.Second, 29*time.Second, 31*time.Second, 10*time.Minute, 61*time.Minute).
		Map(func(d time.Duration) commands.Command {
			return &propCommand{"advance " + d.String(), func(s *system) { s.now = s.now.Add(d) }}
		})
	deploy := gen.IntRange(0, 2).Map(func(v int) commands.Command {
		return &propCommand{fmt.Sprintf("deploy version %d", v), func(s *system) { s.version = v }}
	})
	return gen.Weighted([]gen.WeightedGen{
		{Weight: 8, Gen: sendCmd},
		{Weight: 3, Gen: race},
		{Weight: 5, Gen: complete},
		{Weight: 1, Gen: crash},
		{Weight: 3, Gen: advance},
		{Weight: 1, Gen: deploy},
	})
}

func TestEngineStateful(t *testing.T) {
	policies := [3]*policy.Policy{propPolicy(t, 0), propPolicy(t, 1), propPolicy(t, 2)}
	cmds := &commands.ProtoCommands{
		NewSystemUnderTestFunc: func(commands.State) commands.SystemUnderTest {
			return &system{
				t:        t,
				policies: policies,
				now:      time.Date(2025, 1, 15, 9, 30, 0, 0, time.UTC),
				store:    map[string]policy.Record{},
				ghosts:   map[string]ghost{},
				lastUse:  map[string]time.Time{},
				origins:  map[string]origin{},
			}
		},
		InitialStateGen: gen.Const(0),
		GenCommandFunc:  func(commands.State) gopter.Gen { return genCommand() },
	}
	params := gopter.DefaultTestParameters()
	params.MinSuccessfulTests = 300
	if testing.Short() {
		params.MinSuccessfulTests = 50
	}
	props := gopter.NewProperties(params)
	props.Property("engine invariants", commands.Prop(cmds))
	props.TestingRun(t)
}
