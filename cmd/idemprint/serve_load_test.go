package main

// The proofs of issue 11: several serve processes sharing one store in
// front of one upstream execute every key exactly once under concurrent
// duplicates, and stay correct when an instance is killed, the store
// restarts or the upstream stops. They build the binary, run on loopback
// only, and are bounded in requests and time. They are heavy, so they run
// only with IDEMPRINT_TEST_SERVE_LOAD=1:
//
//	IDEMPRINT_TEST_SERVE_LOAD=1 go test ./cmd/idemprint -run 'TestServeLoad' -v

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/internal/testenv"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store/pgstore"
	"github.com/idemprint/idemprint/store/redisstore"
)

// loadEnv turns the load and fault runs on.
const loadEnv = "IDEMPRINT_TEST_SERVE_LOAD"

func requireLoad(t *testing.T) {
	t.Helper()
	if os.Getenv(loadEnv) != "1" {
		t.Skip("set " + loadEnv + "=1 to run the multi-instance load and fault runs (.ci/run does)")
	}
}

// The policy of the load runs: a reuse of a key with another body is a
// 422, and a reservation whose holder vanished blocks its key for 5 s.
// A lease must outlast the store's recovery from a fault, or a holder that
// cannot complete in time sees its key taken over: on 2 cores, three
// instances reopening their pools' 96 PostgreSQL connections under load
// take about 2 s, which a 2 s lease did not cover.
const (
	serveLeaseLoad  = 5 * time.Second
	servePolicyLoad = `{"defaults": {"methods": []},
  "rules": [{"route": "POST /pay", "lease": "5s", "ttl": "1h", "on_mismatch": "reject", "mismatch_status": 422}]}`
)

// execution is one run of the upstream's handler.
type execution struct {
	n          int    // 1 for the key's first execution
	via        string // the serve instance, by its X-Forwarded-Host
	start, end time.Time
	lost       bool // the answer could not be written back
}

// ledger is the upstream of the load runs: it counts executions per key,
// each with its times and the instance it came through. It can be
// stopped and started again on the same address.
type ledger struct {
	delay time.Duration
	addr  string

	mu    sync.Mutex
	execs map[string][]*execution
	srv   *http.Server
}

func newLedger(t *testing.T, delay time.Duration) *ledger {
	l := &ledger{delay: delay, execs: map[string][]*execution{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.addr = ln.Addr().String()
	l.serve(ln)
	t.Cleanup(l.stop)
	return l
}

func (l *ledger) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(l.handle)}
	l.mu.Lock()
	l.srv = srv
	l.mu.Unlock()
	go srv.Serve(ln)
}

func (l *ledger) handle(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	key := r.Header.Get("Idempotency-Key")
	e := &execution{via: r.Header.Get("X-Forwarded-Host"), start: time.Now()}
	l.mu.Lock()
	l.execs[key] = append(l.execs[key], e)
	e.n = len(l.execs[key])
	l.mu.Unlock()
	time.Sleep(l.delay)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, err := fmt.Fprintf(w, `{"key":%q,"execution":%d}`, key, e.n)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	l.mu.Lock()
	e.end, e.lost = time.Now(), err != nil
	l.mu.Unlock()
}

// stop closes the listener and every connection at once: the handlers
// under way still run, and their answers are lost.
func (l *ledger) stop() {
	l.mu.Lock()
	srv := l.srv
	l.mu.Unlock()
	srv.Close()
}

// start listens again on the same address.
func (l *ledger) start(t *testing.T) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		ln, err := net.Listen("tcp", l.addr)
		if err == nil {
			l.serve(ln)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the upstream cannot listen again on %s: %v", l.addr, err)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *ledger) snapshot() map[string][]execution {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]execution, len(l.execs))
	for k, es := range l.execs {
		for _, e := range es {
			out[k] = append(out[k], *e)
		}
	}
	return out
}

// answerKind classifies what a client got.
type answerKind int

const (
	fresh       answerKind = iota // 201 from an execution
	replayed                      // 201 with Idempotent-Replayed
	inFlight                      // 409 idempotency-key-in-flight
	keyReuse                      // 422 idempotency-key-reuse
	unavailable                   // 503 idempotency-store-unavailable
	unreachable                   // 502 upstream-unreachable
	unknown                       // 504 upstream-outcome-unknown
	broken                        // no complete answer: refused, reset, cut off
	unexpected                    // anything else: a failure
	numKinds
)

var kindNames = [numKinds]string{"fresh 201", "replayed 201", "409 in flight", "422 key reuse", "503 store unavailable", "502 upstream unreachable", "504 outcome unknown", "broken", "unexpected"}

// final reports whether a client stops at this answer.
func (k answerKind) final() bool { return k == fresh || k == replayed || k == keyReuse }

// loadRun is one run of the load generator.
type loadRun struct {
	keys, dups    int // keys, and concurrent duplicates of each
	mismatchEvery int // every Nth key also gets a request with another body
	workers       int // keys sent at once
	retry         bool
	deadline      time.Duration // of a request with its retries, under retry
	tenant        string
	bases         []string      // instance URLs
	dead          []atomic.Bool // instances known to be gone
	client        *http.Client

	keysDone atomic.Int64
	counts   [numKinds]atomic.Int64
	mu       sync.Mutex
	failures []string
	bodies   map[string]map[string]bool // the 201 bodies each key answered
	fresh    map[string]int             // fresh answers per key
}

func newLoadRun(tenant string, bases []string, retry bool) *loadRun {
	return &loadRun{
		keys: 500, dups: 16, mismatchEvery: 10, workers: 16,
		retry: retry, deadline: 30 * time.Second, tenant: tenant, bases: bases,
		dead: make([]atomic.Bool, len(bases)),
		client: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
			MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0, DisableCompression: true,
		}},
		bodies: map[string]map[string]bool{}, fresh: map[string]int{},
	}
}

func (lr *loadRun) key(i int) string { return fmt.Sprintf("%s-%04d", lr.tenant, i) }

func (lr *loadRun) failf(format string, args ...any) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if len(lr.failures) < 20 {
		lr.failures = append(lr.failures, fmt.Sprintf(format, args...))
	}
}

// run sends every key's duplicates, then its mismatch, and returns when
// every request has its answer.
func (lr *loadRun) run() time.Duration {
	start := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	for range lr.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				lr.sendKey(i)
				lr.keysDone.Add(1)
			}
		}()
	}
	for i := range lr.keys {
		next <- i
	}
	close(next)
	wg.Wait()
	return time.Since(start)
}

func (lr *loadRun) sendKey(i int) {
	key := lr.key(i)
	body := fmt.Sprintf(`{"order":%d,"amountCents":1000,"currency":"EUR"}`, i)
	var wg sync.WaitGroup
	for d := range lr.dups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(d) * 2 * time.Millisecond) // some meet the reservation, some the record
			lr.send(key, body, i+d, false)
		}()
	}
	wg.Wait()
	if i%lr.mismatchEvery == 0 {
		lr.send(key, fmt.Sprintf(`{"order":%d,"amountCents":999999,"currency":"EUR"}`, i), i, true)
	}
}

// send sends one request, starting at instance at, and, under retry, again
// to the next instance until its answer is final.
func (lr *loadRun) send(key, body string, at int, mismatch bool) {
	stop := time.Now().Add(lr.deadline)
	for try := 0; ; try++ {
		inst := (at + try) % len(lr.bases)
		if lr.dead[inst].Load() {
			continue
		}
		k, got := lr.post(lr.bases[inst], key, body)
		lr.counts[k].Add(1)
		switch {
		case k == unexpected:
			lr.failf("%s: unexpected answer %s", key, got)
			return
		case mismatch && k.final() && k != keyReuse:
			lr.failf("%s: the mismatching request got %s %s, want 422 key reuse", key, kindNames[k], got)
			return
		case !mismatch && k == keyReuse:
			lr.failf("%s: a duplicate got 422 key reuse", key)
			return
		case k == fresh || k == replayed:
			lr.mu.Lock()
			if lr.bodies[key] == nil {
				lr.bodies[key] = map[string]bool{}
			}
			lr.bodies[key][got] = true
			if k == fresh {
				lr.fresh[key]++
			}
			lr.mu.Unlock()
		}
		if k.final() || !lr.retry {
			return
		}
		if time.Now().After(stop) {
			lr.failf("%s: no final answer within %v; last %s", key, lr.deadline, kindNames[k])
			return
		}
		time.Sleep(time.Duration(50+rand.IntN(100)) * time.Millisecond)
	}
}

// post sends one request and classifies its answer; the body of a 201
// is returned, or a description of anything unexpected.
func (lr *loadRun) post(base, key, body string) (answerKind, string) {
	req, _ := http.NewRequest("POST", base+"/pay", strings.NewReader(body))
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("X-Account", lr.tenant)
	req.Header.Set("Content-Type", "application/json")
	resp, err := lr.client.Do(req)
	if err != nil {
		return broken, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return broken, err.Error()
	}
	var p struct{ Type string }
	json.Unmarshal(b, &p)
	switch {
	case resp.StatusCode == 201 && resp.Header.Get("Idempotent-Replayed") == "true":
		return replayed, string(b)
	case resp.StatusCode == 201:
		return fresh, string(b)
	case resp.StatusCode == 409 && p.Type == policy.TypeInFlight:
		return inFlight, ""
	case resp.StatusCode == 422 && p.Type == policy.TypeKeyReuse:
		return keyReuse, ""
	case resp.StatusCode == 503 && p.Type == idemhttp.TypeStoreUnavailable:
		return unavailable, ""
	case resp.StatusCode == 502 && p.Type == "https://idemprint.dev/problems/upstream-unreachable":
		return unreachable, ""
	case resp.StatusCode == 504 && p.Type == "https://idemprint.dev/problems/upstream-outcome-unknown":
		return unknown, ""
	}
	return unexpected, fmt.Sprintf("%d %s", resp.StatusCode, b)
}

// fault is what a fault run did, for the checks.
type fault struct {
	name  string
	at    time.Time // when it began
	until time.Time // when its action returned: a kill takes effect by then
	// via, when set, is the only instance whose executions may be
	// repeated (the killed one).
	via string
	// window is how long before at an execution that ended may still have
	// been cut by the fault (its record or answer not yet written), and
	// how long after until one that began may have been.
	window time.Duration
	// mustRepeat, when set, selects the executions that must have been
	// repeated after their lease; the others that overlap the fault may
	// be.
	mustRepeat func(e execution) bool
	// noRepeat says no execution may be repeated at all.
	noRepeat bool
	done     chan struct{} // closed once at is set and the fault is over
}

// inject runs do once the run has finished a third of its keys, and
// records when.
func (f *fault) inject(lr *loadRun, do func()) {
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		waitKeys(lr, lr.keys/3)
		f.at = time.Now()
		do()
		f.until = time.Now()
	}()
}

// loadReport checks a run against the ledger and prints its figures.
func loadReport(t *testing.T, name string, lr *loadRun, led *ledger, took time.Duration, f *fault) {
	t.Helper()
	if f != nil {
		<-f.done
	}
	execs := led.snapshot()
	var requests int64
	for k := range numKinds {
		requests += lr.counts[k].Load()
	}
	for _, msg := range lr.failures {
		t.Error(msg)
	}
	once, twice, must := 0, 0, 0
	var repeatedKeys []string
	for i := range lr.keys {
		key := lr.key(i)
		es := execs[key]
		sort.Slice(es, func(a, b int) bool { return es[a].n < es[b].n })
		bodies := lr.bodies[key]
		switch {
		case len(es) == 1:
			once++
			if f != nil && f.mustRepeat != nil && f.mustRepeat(es[0]) {
				must++
				t.Errorf("%s: executed once, but its first execution (via %s, %v to %v) was cut by the fault and must have been repeated after its lease", key, es[0].via, es[0].start.Format("15:04:05.000"), es[0].end.Format("15:04:05.000"))
			}
		case len(es) == 2 && f != nil && !f.noRepeat:
			twice++
			repeatedKeys = append(repeatedKeys, key)
			e1, e2 := es[0], es[1]
			if f.mustRepeat != nil && f.mustRepeat(e1) {
				must++
			}
			// An execution whose answer was lost was cut, and so was one
			// that began in the moment between the fault's time and its
			// effect (a request forwarded by an instance as it was killed).
			cut := e1.lost || e1.start.Before(f.until.Add(f.window)) && e1.end.After(f.at.Add(-f.window))
			if !cut || f.via != "" && e1.via != f.via {
				t.Errorf("%s: executed twice, but its first execution (via %s, %v to %v) was not cut by the fault at %v", key, e1.via, e1.start.Format("15:04:05.000"), e1.end.Format("15:04:05.000"), f.at.Format("15:04:05.000"))
			}
			if gap := e2.start.Sub(e1.start); gap < serveLeaseLoad-100*time.Millisecond {
				t.Errorf("%s: executed again %v after its first execution began, before its %v lease lapsed", key, gap, serveLeaseLoad)
			}
		default:
			t.Errorf("%s: executed %d times", key, len(es))
		}
		if len(es) > 0 && len(bodies) != 1 && !(len(es) == 2 && len(bodies) == 2) {
			t.Errorf("%s: answered %d different 201 bodies: %v", key, len(bodies), bodies)
		}
		if want := fmt.Sprintf(`{"key":%q,"execution":1}`, key); f == nil && (lr.fresh[key] != 1 || !bodies[want]) {
			t.Errorf("%s: %d fresh answers and bodies %v, want one fresh answer, %s", key, lr.fresh[key], bodies, want)
		}
	}
	if n := len(execs); n != lr.keys {
		t.Errorf("the upstream saw %d keys, want %d", n, lr.keys)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d keys x %d duplicates over %d instances, 1 in %d keys also reused with another body: %d requests in %v (%.0f/s)\n",
		name, lr.keys, lr.dups, len(lr.bases), lr.mismatchEvery, requests, took.Round(time.Millisecond), float64(requests)/took.Seconds())
	fmt.Fprintf(&b, "  keys executed once: %d, twice: %d", once, twice)
	if f != nil {
		fmt.Fprintf(&b, " (fault: %s; executions cut by it that had to run again after the lease: %d)", f.name, must)
	}
	b.WriteString("\n  answers:")
	for k := range numKinds {
		if n := lr.counts[k].Load(); n > 0 {
			fmt.Fprintf(&b, " %s %d;", kindNames[k], n)
		}
	}
	t.Log(b.String())
	if len(repeatedKeys) > 0 {
		t.Logf("  keys executed twice: %v", repeatedKeys)
	}
}

// loadCluster is serve instances sharing a store in front of a ledger.
type loadCluster struct {
	led   *ledger
	procs []*serveProc
}

type serveProc struct {
	proc *serveProcess
	base string // http://host:port
	host string // host:port, as the upstream sees it in X-Forwarded-Host
}

// startCluster builds the binary and starts n instances with the store.
func startCluster(t *testing.T, n int, storeArgs []string, delay time.Duration) *loadCluster {
	t.Helper()
	bin := buildServe(t)
	c := &loadCluster{led: newLedger(t, delay)}
	polFile := writeTemp(t, "policy.json", servePolicyLoad)
	for range n {
		args := append([]string{"--policy", polFile, "--upstream", "http://" + c.led.addr,
			"--tenant-header", "X-Account"}, storeArgs...)
		p, base, _ := startServe(t, bin, args...)
		c.procs = append(c.procs, &serveProc{proc: p, base: base, host: strings.TrimPrefix(base, "http://")})
	}
	return c
}

func (c *loadCluster) bases() []string {
	var out []string
	for _, p := range c.procs {
		out = append(out, p.base)
	}
	return out
}

// runTenant is a tenant no earlier run used, so that records left in a
// shared store by earlier runs never meet this one's keys.
func runTenant(name string) string {
	return fmt.Sprintf("%s-%d-%04d", name, time.Now().UnixNano(), rand.IntN(10000))
}

// waitKeys waits until the run has finished n keys.
func waitKeys(lr *loadRun, n int) {
	for lr.keysDone.Load() < int64(n) {
		time.Sleep(5 * time.Millisecond)
	}
}

// TestServeLoadMemory runs the load against one instance with the
// memory store: the generator and the checks, without a service.
func TestServeLoadMemory(t *testing.T) {
	requireLoad(t)
	loadStoreSuite(t, "memory", 1, nil, nil)
}

// loadStoreSuite runs, against one shared store, the exactly-once run and
// the fault runs that need no control of the store.
func loadStoreSuite(t *testing.T, name string, instances int, storeArgs []string, purge purger) {
	t.Run("ExactlyOnce", func(t *testing.T) {
		c := startCluster(t, instances, storeArgs, 20*time.Millisecond)
		lr := newLoadRun(runTenant(name), c.bases(), false)
		purge.after(t, lr.tenant)
		took := lr.run()
		loadReport(t, name+", exactly once", lr, c.led, took, nil)
	})
	t.Run("KillInstance", func(t *testing.T) {
		if instances < 2 {
			t.Skip("needs instances that share a store")
		}
		c := startCluster(t, instances, storeArgs, 100*time.Millisecond)
		lr := newLoadRun(runTenant(name), c.bases(), true)
		purge.after(t, lr.tenant)
		killed := c.procs[1]
		f := &fault{name: "kill -9 of one instance", via: killed.host, window: 50 * time.Millisecond}
		f.mustRepeat = func(e execution) bool { return e.via == killed.host && e.start.Before(f.at) && e.end.After(f.at) }
		f.inject(lr, func() {
			killed.proc.Kill()
			lr.dead[1].Store(true)
		})
		took := lr.run()
		loadReport(t, name+", kill -9 of one instance at a third of the keys", lr, c.led, took, f)
	})
	t.Run("UpstreamRestart", func(t *testing.T) {
		c := startCluster(t, instances, storeArgs, 100*time.Millisecond)
		lr := newLoadRun(runTenant(name), c.bases(), true)
		purge.after(t, lr.tenant)
		f := &fault{name: "upstream stopped for 500 ms", window: 50 * time.Millisecond}
		f.mustRepeat = func(e execution) bool { return e.lost }
		f.inject(lr, func() {
			c.led.stop()
			time.Sleep(500 * time.Millisecond)
			c.led.start(t)
		})
		took := lr.run()
		loadReport(t, name+", upstream stopped and started at a third of the keys", lr, c.led, took, f)
	})
}

// withParam returns the URL u with the query parameter name=value added.
func withParam(t *testing.T, u, name, value string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	q := parsed.Query()
	q.Set(name, value)
	parsed.RawQuery = q.Encode()
	return parsed.String()
}

// TestServeLoadPostgres runs three instances sharing a PostgreSQL table.
// The store fault terminates the instances' backends (by their
// application_name) five times, 200 ms apart, instead of restarting the
// server, which other tests share: every query under way fails, the pools
// reconnect, and records written before survive.
func TestServeLoadPostgres(t *testing.T) {
	requireLoad(t)
	pgURL := testenv.Lookup(t, testenv.Postgres, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	app := fmt.Sprintf("idemprint_load_%d", time.Now().UnixNano())
	storeArgs := []string{"--store", withParam(t, pgURL, "application_name", app)}
	loadStoreSuite(t, "PostgreSQL", 3, storeArgs, pgPurger(pgURL))
	t.Run("StoreFault", func(t *testing.T) {
		pool, err := pgxpool.New(context.Background(), pgURL)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		c := startCluster(t, 3, storeArgs, 100*time.Millisecond)
		lr := newLoadRun(runTenant("PostgreSQL"), c.bases(), true)
		pgPurger(pgURL).after(t, lr.tenant)
		f := &fault{name: "the instances' PostgreSQL backends terminated 5 times, 200 ms apart", noRepeat: true}
		var terminated int
		f.inject(lr, func() { terminated = terminateBackends(t, pool, app) })
		took := lr.run()
		loadReport(t, fmt.Sprintf("PostgreSQL, %d backends of the instances terminated at a third of the keys", terminated), lr, c.led, took, f)
	})
}

// TestServeLoadRedis runs three instances sharing a Redis server: the
// shared one for the exactly-once, kill and upstream runs, and one the
// test starts on a free port, with an append-only file synced at every
// write, for the store restart: it is killed (SIGKILL) at a third of the
// keys and started again 500 ms later on the same port and file.
func TestServeLoadRedis(t *testing.T) {
	requireLoad(t)
	redisURL := testenv.Lookup(t, testenv.Redis, "redis://127.0.0.1:6379/0")
	loadStoreSuite(t, "Redis", 3, []string{"--store", redisURL}, redisPurger(redisURL))
	t.Run("StoreRestart", func(t *testing.T) {
		srv := startRedis(t)
		c := startCluster(t, 3, []string{"--store", "redis://" + srv.addr + "/0"}, 100*time.Millisecond)
		lr := newLoadRun(runTenant("Redis"), c.bases(), true)
		f := &fault{name: "Redis killed and started again 500 ms later", noRepeat: true}
		f.inject(lr, func() {
			srv.kill()
			time.Sleep(500 * time.Millisecond)
			srv.start(t)
		})
		took := lr.run()
		loadReport(t, "Redis, the server killed (SIGKILL) and restarted at a third of the keys", lr, c.led, took, f)
	})
}

// redisServer is a redis-server the test runs, whose records survive a
// restart.
type redisServer struct {
	bin, addr, dir string
	cmd            *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	s := &redisServer{bin: testenv.LookPath(t, "redis-server", "redis-server"), dir: t.TempDir()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	ln.Close()
	s.start(t)
	t.Cleanup(s.kill)
	return s
}

func (s *redisServer) start(t *testing.T) {
	_, port, _ := net.SplitHostPort(s.addr)
	s.cmd = exec.Command(s.bin, "--bind", "127.0.0.1", "--port", port, "--dir", s.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no", "--logfile", "")
	if err := s.cmd.Start(); err != nil {
		t.Error(err)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", s.addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("redis-server did not listen on %s", s.addr)
}

func (s *redisServer) kill() {
	if s.cmd != nil && s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// A purger deletes a run's records from a store other tests share, so
// that runs leave nothing behind for their TTL.
type purger func(ctx context.Context, tenant string) (int, error)

// after purges tenant's records when the test ends; a nil purger does
// nothing (the memory store ends with its processes).
func (p purger) after(t *testing.T, tenant string) {
	if p == nil {
		return
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := p(ctx, tenant); err != nil {
			t.Errorf("deleting the records of %s: %v", tenant, err)
		}
	})
}

func redisPurger(u string) purger {
	return func(ctx context.Context, tenant string) (int, error) {
		opts, err := redis.ParseURL(u)
		if err != nil {
			return 0, err
		}
		client := redis.NewClient(opts)
		defer client.Close()
		st, err := redisstore.New(client, redisstore.Options{})
		if err != nil {
			return 0, err
		}
		return st.PurgeTenant(ctx, tenant)
	}
}

func pgPurger(u string) purger {
	return func(ctx context.Context, tenant string) (int, error) {
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			return 0, err
		}
		defer pool.Close()
		st, err := pgstore.New(pool, pgstore.Options{})
		if err != nil {
			return 0, err
		}
		return st.PurgeTenant(ctx, tenant)
	}
}

// terminateBackends terminates the PostgreSQL backends of application app 5
// times, 200 ms apart, and returns how many it terminated.
func terminateBackends(t *testing.T, pool *pgxpool.Pool, app string) int {
	terminated := 0
	for range 5 {
		var n int
		err := pool.QueryRow(context.Background(),
			`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
		if err != nil {
			t.Errorf("terminating the backends: %v", err)
		}
		terminated += n
		time.Sleep(200 * time.Millisecond)
	}
	return terminated
}
