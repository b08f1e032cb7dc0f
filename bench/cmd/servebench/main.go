// Command servebench measures what idempotency costs in front of an API,
// over loopback, in one run: a plain reverse proxy, "idemprint serve"
// with each store, and, as the peer a Go developer would pick instead, a
// Fiber v3 app with and without its idempotency middleware around the
// same trivial handler.
//
//	go run ./cmd/servebench [-rounds 3] [-duration 5s] [-concurrency 32]
//	    [-redis redis://127.0.0.1:6379/0] [-postgres postgres://postgres@127.0.0.1:5432/test?sslmode=disable]
//
// Every target runs in its own process (this program started again in a
// role, or the idemprint binary, built from this checkout), and the load
// generator in this one. Targets are measured in interleaved rounds, in
// an order that keeps each next to its baseline and rotates, for the same
// duration at the same concurrency; each request is a first execution (a
// new key, the worst case: two store round trips). The table gives the
// median of the rounds' throughputs and latency percentiles, and each
// idempotent target's throughput relative to the same server without
// idempotency in the same round (median and range over the rounds).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/middleware/idempotency"

	"github.com/idemprint/idemprint/internal/sidecar"
)

// benchPolicy governs the benchmark's one route as a payments API would.
const benchPolicy = `{
  "defaults": {"methods": []},
  "rules": [{"route": "POST /v1/payments", "fingerprint": {"ignore": ["traceId"]}, "ttl": "10m", "lease": "30s"}]
}`

// answer is the trivial handler's answer, the same from every server.
const answer = `{"id":"pay_1","status":"succeeded"}`

func main() {
	if len(os.Args) > 2 && os.Args[1] == "role" {
		if err := role(os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, "servebench:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(runBench(os.Args[1:], os.Stdout, os.Stderr))
}

// role serves as one of the benchmark's processes until killed.
func role(name string, args []string) error {
	switch {
	case name == "upstream" && len(args) == 1:
		return http.ListenAndServe(args[0], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, answer)
		}))
	case name == "bare" && len(args) == 2:
		u, err := url.Parse(args[1])
		if err != nil {
			return err
		}
		// The same upstream timeout as serve's default, so that both pay
		// for it.
		return http.ListenAndServe(args[0], sidecar.NewBareProxy(u, sidecar.ProxyOptions{Timeout: time.Minute}))
	case name == "load" && len(args) == 2: // load ADDR DURATION: for profiling a target
		d, err := time.ParseDuration(args[1])
		if err != nil {
			return err
		}
		var gen generator
		gen.init(32)
		r := gen.load(args[0], d)
		fmt.Printf("%.0f req/s  p50 %v  p99 %v  errors %d\n", r.rps, r.p50, r.p99, r.errors)
		return nil
	case (name == "fiber" || name == "fiber-idempotency") && len(args) == 1:
		app := fiber.New()
		if name == "fiber-idempotency" {
			// As fair as it gets: the same key header, keys kept as long
			// as idemprint's, the middleware's own in-memory storage and
			// lock (its defaults). Its key syntax check wants 36
			// characters, which the generator's keys have.
			app.Use(idempotency.New(idempotency.Config{KeyHeader: "Idempotency-Key", Lifetime: 10 * time.Minute}))
		}
		app.Post("/v1/payments", func(c fiber.Ctx) error {
			c.Set("Content-Type", "application/json")
			return c.Status(http.StatusCreated).SendString(answer)
		})
		return app.Listen(args[0], fiber.ListenConfig{DisableStartupMessage: true})
	}
	return fmt.Errorf("unknown role %q %q", name, args)
}

// target is one server under load.
type target struct {
	name     string
	proxied  bool   // forwards to the upstream, whose CPU counts too
	baseline string // the target this one is compared with, or ""
	addr     string
	cmd      *exec.Cmd
	results  []result
}

// result is one round's measurement of one target.
type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int64
	requests int
	// cpu is the CPU time per answered request of the target's process
	// and, behind a proxy, of the upstream's: the servers' cost, which
	// the load from other processes on the machine shifts much less than
	// throughput. A store server's own CPU is not counted.
	cpu time.Duration
}

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("servebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 3, "rounds over every target")
	duration := fs.Duration("duration", 5*time.Second, "load per target per round")
	warmup := fs.Duration("warmup", time.Second, "load per target before the first round, not measured")
	concurrency := fs.Int("concurrency", 32, "requests under way at once")
	redisURL := fs.String("redis", "", "a redis:// URL: also measure serve with Redis")
	pgURL := fs.String("postgres", "", "a postgres:// URL: also measure serve with PostgreSQL")
	idemprint := fs.String("idemprint", "", "the idemprint binary (default: built from this checkout)")
	serveLog := fs.String("serve-log", "warn", "serve's --log-level (info writes a line per request, to /dev/null here)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	tmp, err := os.MkdirTemp("", "servebench")
	if err != nil {
		fmt.Fprintln(stderr, "servebench:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	var targets []*target
	defer func() {
		for _, t := range targets {
			if t.cmd != nil && t.cmd.Process != nil {
				t.cmd.Process.Kill()
				t.cmd.Wait()
			}
		}
	}()
	fail := func(err error) int {
		fmt.Fprintln(stderr, "servebench:", err)
		return 2
	}

	self, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	bin := *idemprint
	if bin == "" {
		bin = filepath.Join(tmp, "idemprint")
		fmt.Fprintln(stderr, "building idemprint")
		// In the main module, with its own requirements: the bench module
		// requires only what the packages it imports need.
		root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/idemprint/idemprint").Output()
		if err != nil {
			return fail(fmt.Errorf("finding the idemprint module: %w", err))
		}
		build := exec.Command("go", "build", "-o", bin, "./cmd/idemprint")
		build.Dir = strings.TrimSpace(string(root))
		build.Stderr = stderr
		if err := build.Run(); err != nil {
			return fail(fmt.Errorf("building idemprint: %w", err))
		}
	}
	policyFile := filepath.Join(tmp, "policy.json")
	if err := os.WriteFile(policyFile, []byte(benchPolicy), 0o644); err != nil {
		return fail(err)
	}

	upstream := &target{name: "upstream"}
	if err := start(upstream, self, "role", "upstream", "{addr}"); err != nil {
		return fail(err)
	}
	targets = append(targets, upstream)
	upURL := "http://" + upstream.addr
	serve := func(store string) []string {
		return []string{bin, "serve", "--listen", "{addr}", "--policy", policyFile, "--upstream", upURL,
			"--single-tenant", "--store", store, "--log-level", *serveLog}
	}
	measured := []*target{
		{name: "reverse proxy, no idempotency"},
		{name: "idemprint serve, memory store", baseline: "reverse proxy, no idempotency"},
	}
	argv := [][]string{{self, "role", "bare", "{addr}", upURL}, serve("memory")}
	if *redisURL != "" {
		measured = append(measured, &target{name: "idemprint serve, Redis store", baseline: "reverse proxy, no idempotency"})
		argv = append(argv, serve(*redisURL))
	}
	if *pgURL != "" {
		measured = append(measured, &target{name: "idemprint serve, PostgreSQL store", baseline: "reverse proxy, no idempotency"})
		argv = append(argv, serve(*pgURL))
	}
	measured = append(measured,
		&target{name: "Fiber v3, no idempotency"},
		&target{name: "Fiber v3 + idempotency middleware", baseline: "Fiber v3, no idempotency"})
	argv = append(argv, []string{self, "role", "fiber", "{addr}"}, []string{self, "role", "fiber-idempotency", "{addr}"})
	for i, t := range measured {
		t.proxied = !strings.HasPrefix(t.name, "Fiber")
		if err := start(t, argv[i]...); err != nil {
			return fail(fmt.Errorf("%s: %w", t.name, err))
		}
		targets = append(targets, t)
	}

	var gen generator
	gen.init(*concurrency)
	for _, t := range measured {
		fmt.Fprintf(stderr, "warming up %s\n", t.name)
		if r := gen.load(t.addr, *warmup); r.errors > 0 {
			return fail(fmt.Errorf("%s: %d requests failed while warming up", t.name, r.errors))
		}
	}
	for round := range *rounds {
		for _, t := range roundOrder(measured, round) {
			procs := []*exec.Cmd{t.cmd}
			if t.proxied {
				procs = append(procs, upstream.cmd)
			}
			before := cpuTime(procs)
			r := gen.load(t.addr, *duration)
			if r.requests > 0 {
				r.cpu = (cpuTime(procs) - before) / time.Duration(r.requests)
			}
			fmt.Fprintf(stderr, "round %d/%d  %-40s %8.0f req/s  p50 %v  p99 %v  cpu/req %v  errors %d\n",
				round+1, *rounds, t.name, r.rps, r.p50, r.p99, r.cpu, r.errors)
			t.results = append(t.results, r)
		}
	}
	report(stdout, measured, *rounds, *duration, *concurrency)
	return 0
}

// roundOrder returns the order of a round: each baseline with the targets
// compared to it, one group after the other, so that a target runs
// seconds from its baseline; the groups' order and the order within each
// rotate from round to round, so that nobody is always first.
func roundOrder(ts []*target, round int) []*target {
	var groups [][]*target
	for _, t := range ts {
		if t.baseline == "" || len(groups) == 0 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], t)
	}
	var out []*target
	for g := range groups {
		group := groups[(g+round)%len(groups)]
		for i := range group {
			out = append(out, group[(i+round)%len(group)])
		}
	}
	return out
}

// start starts t's process, with {addr} in argv replaced by a free
// loopback address, and waits until it accepts connections.
func start(t *target, argv ...string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	t.addr = ln.Addr().String()
	ln.Close()
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, "{addr}", t.addr)
	}
	t.cmd = exec.Command(argv[0], argv[1:]...)
	t.cmd.Stdout, t.cmd.Stderr = nil, os.Stderr
	if slices.Contains(argv, "info") {
		t.cmd.Stderr = nil // serve's request log: to /dev/null
	}
	if err := t.cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- t.cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited at start: %v", err)
		default:
		}
		if c, err := net.Dial("tcp", t.addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("not listening after 20 s")
}

// generator sends requests with new keys at a fixed concurrency.
type generator struct {
	concurrency int
	client      *http.Client
	seq         atomic.Uint64
	prefix      uint32
}

func (g *generator) init(concurrency int) {
	g.concurrency = concurrency
	g.client = &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: concurrency, MaxConnsPerHost: concurrency, DisableCompression: true,
	}}
	g.prefix = uint32(time.Now().UnixNano())
}

// key returns a new key in the form of a UUID (36 characters, as Fiber's
// key check wants).
func (g *generator) key() string {
	n := g.seq.Add(1)
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", g.prefix, uint16(n>>48), uint16(n>>36)&0xfff, uint16(n>>24)&0xfff, n&0xffffffffffff)
}

// load sends requests to addr for d and measures them.
func (g *generator) load(addr string, d time.Duration) result {
	url := "http://" + addr + "/v1/payments"
	var wg sync.WaitGroup
	var errCount atomic.Int64
	lat := make([][]time.Duration, g.concurrency)
	start := time.Now()
	stop := start.Add(d)
	for w := range g.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, 1<<14)
			for n := 0; time.Now().Before(stop); n++ {
				body := fmt.Sprintf(`{"orderId":"ord_%d_%d","amountCents":1000,"currency":"EUR","traceId":"t-%d"}`, w, n, n)
				req, _ := http.NewRequest("POST", url, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", g.key())
				t0 := time.Now()
				resp, err := g.client.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusCreated {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					errCount.Add(1)
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			lat[w] = mine
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	return result{
		requests: len(all),
		rps:      float64(len(all)) / elapsed.Seconds(),
		p50:      quantile(all, 0.50),
		p99:      quantile(all, 0.99),
		errors:   errCount.Load(),
	}
}

// cpuTime returns the CPU time (user and system) the processes have used
// so far, from /proc; 0 where it cannot be read.
func cpuTime(procs []*exec.Cmd) time.Duration {
	var total time.Duration
	for _, c := range procs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Process.Pid))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')') // the command may hold spaces
		if i < 0 || i+2 > len(s) {
			continue
		}
		f := strings.Fields(s[i+2:]) // from field 3, the state
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
		stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
		total += time.Duration(utime+stime) * time.Second / clockTicks
	}
	return total
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100

// quantile returns the q-quantile of sorted durations (nearest rank), or 0.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// median returns the median of xs (the mean of the middle two for an
// even count).
func median[T float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// report prints the Markdown table of the medians. A target's throughput
// relative to its baseline is the median of the ratios of each round,
// where the two ran seconds apart under the same conditions, with the
// lowest and highest ratio.
func report(w io.Writer, ts []*target, rounds int, d time.Duration, concurrency int) {
	byName := map[string]*target{}
	for _, t := range ts {
		byName[t.name] = t
	}
	ratios := func(t *target) []float64 {
		base := byName[t.baseline]
		out := make([]float64, len(t.results))
		for i, r := range t.results {
			out[i] = r.rps / base.results[i].rps
		}
		return out
	}
	fmt.Fprintf(w, "Medians of %d interleaved rounds of %v per target, %d requests at once, every request a new key, over loopback:\n\n", rounds, d, concurrency)
	cpuRatios := func(t *target) []float64 {
		base := byName[t.baseline]
		out := make([]float64, len(t.results))
		for i, r := range t.results {
			out[i] = float64(base.results[i].cpu) / float64(max(r.cpu, 1))
		}
		return out
	}
	fmt.Fprintln(w, "| target | req/s | p50 | p99 | throughput vs. the same without idempotency (per-round median, range) | server CPU per request | CPU-bound throughput vs. the same without |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	for _, t := range ts {
		rel, cpuRel := "", ""
		if t.baseline != "" {
			rs := ratios(t)
			rel = fmt.Sprintf("%.0f%% (%.0f–%.0f%%)", 100*median(rs), 100*slices.Min(rs), 100*slices.Max(rs))
			cs := cpuRatios(t)
			cpuRel = fmt.Sprintf("%.0f%% (%.0f–%.0f%%)", 100*median(cs), 100*slices.Min(cs), 100*slices.Max(cs))
		}
		var errs int64
		for _, r := range t.results {
			errs += r.errors
		}
		name := t.name
		if errs > 0 {
			name += fmt.Sprintf(" (%d errors)", errs)
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %s | %s | %s |\n", name,
			median(collect(t.results, func(r result) float64 { return r.rps })),
			fmtDuration(median(collect(t.results, func(r result) time.Duration { return r.p50 }))),
			fmtDuration(median(collect(t.results, func(r result) time.Duration { return r.p99 }))), rel,
			fmtDuration(median(collect(t.results, func(r result) time.Duration { return r.cpu }))), cpuRel)
	}
	mem, fi := byName["idemprint serve, memory store"], byName["Fiber v3 + idempotency middleware"]
	if mem != nil && fi != nil {
		fmt.Fprintf(w, "\nidemprint serve (memory) keeps %.0f%% of the bare proxy's throughput (target: at least 80%%); Fiber's idempotency middleware keeps %.0f%% of Fiber's (target: idemprint's share no lower).\n",
			100*median(ratios(mem)), 100*median(ratios(fi)))
		fmt.Fprintf(w, "By server CPU per request (the proxy and its upstream, or the Fiber app): idemprint serve (memory) %.0f%% of the bare proxy, Fiber's idempotency middleware %.0f%% of Fiber.\n",
			100*median(cpuRatios(mem)), 100*median(cpuRatios(fi)))
	}
}

func collect[T any](rs []result, f func(result) T) []T {
	out := make([]T, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
}
