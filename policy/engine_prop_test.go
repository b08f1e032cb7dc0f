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
// fingerprint spec, and races in which a reservation loses and reads the
// winner's record. The store is a map with conditional writes. Alongside it,
// the system keeps a ghost of what each storage key holds, computed from the
// requests it sent and the test's own clock and durations, never from the
// engine's records; every decision is checked against it.

const (
	propTTL   = time.Hour
	propLease = 30 * time.Second
)

// propPolicy returns the test policy; version 0 and 1 differ only in their
// fingerprint spec, so that a deploy changes every spec digest.
func propPolicy(t testing.TB, version int) *policy.Policy {
	ignore := `["traceId"]`
	if version == 1 {
		ignore = `["traceId", "note"]`
	}
	common := `"ttl": "1h", "lease": "30s", "fingerprint": {"ignore": ` + ignore + `}`
	return mustParse(t, `{"rules": [
  {"route": "POST /reject", "on_mismatch": "reject", "on_spec_change": "reject", `+common+`},
  {"route": "POST /replay", "on_mismatch": "replay", "on_spec_change": "replay", `+common+`},
  {"route": "POST /new", "on_mismatch": "new", "on_spec_change": "new", `+common+`},
  {"route": "POST /scoped/{id}", "scope": {"route": true}, "mismatch_status": 409, `+common+`}
]}`)
}

var (
	propTenants = []string{"acme", "globex"}
	propKeys    = []string{"k1", "k2", `"k1"`, ""} // `"k1"` is k1; "" is no key
	propPaths   = []string{"/reject", "/replay", "/new", "/scoped/a", "/scoped/b"}
	propAmounts = []int{1000, 2000}
)

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

// system is the system under test: the engine, a map store and the ghost.
type system struct {
	t        testing.TB
	policies [2]*policy.Policy
	version  int
	now      time.Time
	store    map[string]policy.Record
	ghosts   map[string]ghost
	lastUse  map[string]time.Time // primary storage key: last write
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

func (s *system) request(c send) (*policy.Rule, policy.Request, string) {
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
	return rule, req, strings.Trim(propKeys[c.Key], `"`)
}

// read returns the stored record and the ghost under sk.
func (s *system) read(sk string) (*policy.Record, *ghost) {
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

// handle runs the decision loop for one request. With a stale snapshot
// (a race's loser), the first decision is made on it.
func (s *system) handle(c send, snapshot func() (*policy.Record, *ghost)) {
	rule, req, key := s.request(c)
	sk, keyErr := rule.StorageKey(req)
	var rec *policy.Record
	var g *ghost
	expired := false
	if keyErr == nil {
		if snapshot == nil {
			rec, g = s.read(sk)
		} else {
			rec, g = snapshot()
		}
		used, ok := s.lastUse[sk]
		expired = snapshot == nil && (!ok || !s.now.Before(used.Add(propTTL)))
	}
	basis := sk
	for step := 0; ; step++ {
		before := len(s.store)
		snap := fmt.Sprint(s.store)
		d, err := rule.Decide(req, rec, s.now)
		if err != nil {
			s.fail("%v: Decide: %v", c, err)
			return
		}
		s.check(c, rule, req, key, basis, g, d)
		if step == 0 && expired && d.Action != policy.Execute {
			s.fail("%v: the key was last used a TTL ago or never, yet %v (%v)", c, d.Action, d.Reason)
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
			s.reserved(rule, req, key, *d.Reserve)
			return
		}
		if step == 3 {
			s.fail("%v: the decision loop does not end", c)
			return
		}
		basis = d.StorageKey
		rec, g = s.read(basis) // lost the race: decide on the winner
	}
}

// reserved records a successful reservation in the ghost and starts its
// handler.
func (s *system) reserved(rule *policy.Rule, req policy.Request, key string, res policy.Record) {
	s.ghosts[res.StorageKey] = ghost{
		inFlight: true, tenant: req.Tenant, key: key, route: rule.Route(), digest: rule.Fingerprinter().SpecDigest(),
		fp: req.Fingerprint, leaseUntil: s.now.Add(propLease), until: s.now.Add(propTTL),
	}
	if sk, _ := rule.StorageKey(req); sk == res.StorageKey {
		s.lastUse[sk] = s.now
	}
	s.pending = append(s.pending, &execution{rule: rule, res: res, req: req, route: rule.Route(), leaseUntil: s.now.Add(propLease)})
}

// check holds every decision to the ghost of the key it was decided at.
func (s *system) check(c send, rule *policy.Rule, req policy.Request, key, basis string, g *ghost, d policy.Decision) {
	if key == "" {
		if d.Action != policy.Reject || d.Reason != policy.ReasonMissingKey || d.Response.Status != 400 {
			s.fail("%v: no key, yet %v %v %d", c, d.Action, d.Reason, d.Response.Status)
		}
		return
	}
	live := g != nil && (s.now.Before(g.until) || g.inFlight && s.now.Before(g.leaseUntil))
	if !live {
		if d.Reason != policy.ReasonFirst || (d.Action != policy.Execute && d.Action != policy.ExecuteAsNew) || d.StorageKey != basis {
			s.fail("%v: nothing binds %s, yet %v %v at %s", c, basis, d.Action, d.Reason, d.StorageKey)
		}
		return
	}
	digest := rule.Fingerprinter().SpecDigest()
	want := policy.ReasonRetry
	switch {
	case g.route != rule.Route() || g.digest == digest && g.fp != req.Fingerprint:
		want = policy.ReasonMismatch
	case g.digest != digest:
		want = policy.ReasonSpecChanged
	}
	if g.tenant != req.Tenant || g.key != key {
		s.fail("%v: the record at %s belongs to %s/%s", c, basis, g.tenant, g.key)
	}
	if d.Reason != want {
		s.fail("%v: reason %v, want %v (record in flight %v)", c, d.Reason, want, g.inFlight)
	}
	running := g.inFlight && s.now.Before(g.leaseUntil)
	switch {
	case d.Action == policy.Execute && d.StorageKey == basis && running:
		s.fail("%v: executes while %s is in flight", c, basis)
	case d.Action == policy.Execute && want == policy.ReasonMismatch && !(rule.OnMismatch() == policy.ResolveReplay && g.inFlight):
		s.fail("%v: executes a mismatching request under %s", c, basis)
	case want == policy.ReasonRetry && running && (d.Action != policy.Reject || d.Problem.Type != policy.TypeInFlight):
		s.fail("%v: a retry meets a running reservation with %v", c, d.Action)
	}
	if d.Action == policy.Replay {
		o, ok := s.origins[string(d.Response.Body)]
		switch {
		case !ok:
			s.fail("%v: replays %q, which no handler produced", c, d.Response.Body)
		case o.tenant != req.Tenant || o.key != key:
			s.fail("%v: replays the response of %s/%s", c, o.tenant, o.key)
		case d.Reason == policy.ReasonRetry && (o.fp != req.Fingerprint || o.digest != digest || o.route != rule.Route()):
			s.fail("%v: replays as a retry a response to another request", c)
		case d.Reason == policy.ReasonMismatch && rule.OnMismatch() != policy.ResolveReplay,
			d.Reason == policy.ReasonSpecChanged && rule.OnSpecChange() != policy.ResolveReplay:
			s.fail("%v: replays on %v although the rule does not say replay", c, d.Reason)
		}
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
		if sk, _ := e.rule.StorageKey(e.req); sk == e.res.StorageKey {
			s.lastUse[sk] = s.now
		}
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

func genSend() gopter.Gen {
	return gopter.CombineGens(
		gen.IntRange(0, len(propTenants)-1), gen.IntRange(0, len(propKeys)-1), gen.IntRange(0, len(propPaths)-1),
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
			rule, req, _ := s.request(loser)
			sk, _ := rule.StorageKey(req)
			rec, g := s.read(sk) // the loser reads, then the winner goes first
			s.handle(winner, nil)
			s.handle(loser, func() (*policy.Record, *ghost) { return rec, g })
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
	deploy := gen.Const(commands.Command(&propCommand{"deploy", func(s *system) { s.version = 1 - s.version }}))
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
	policies := [2]*policy.Policy{propPolicy(t, 0), propPolicy(t, 1)}
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
