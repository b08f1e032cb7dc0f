package main

// The client's story end to end: clients whose requests go through
// idemclient's transport send operations, each as several concurrent
// duplicates with one key, through serve instances sharing a store, while
// a proxy in front of the instances drops some connections after the
// instance answered (the lost response) and the store fails. Every
// operation must end with its own 201 and execute once. It runs with the
// load runs:
//
//	IDEMPRINT_TEST_SERVE_LOAD=1 IDEMPRINT_TEST_REDIS=… IDEMPRINT_TEST_POSTGRES=… \
//	  go test ./cmd/idemprint -run 'TestClientEndToEnd' -v

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idemprint/idemprint/idemclient"
	"github.com/idemprint/idemprint/internal/testenv"
)

// lossyProxy forwards to one serve instance and, for every dropEvery-th
// request, reads the instance's whole answer and then drops the client's
// connection instead of sending it: the request executed, its response is
// lost.
type lossyProxy struct {
	target    string
	dropEvery int64
	client    *http.Client
	n, lost   atomic.Int64
}

func (p *lossyProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), strings.NewReader(string(body)))
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	req.Header = r.Header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		panic(http.ErrAbortHandler) // the instance gave no answer: neither does the proxy
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || p.n.Add(1)%p.dropEvery == 0 {
		p.lost.Add(1)
		panic(http.ErrAbortHandler)
	}
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(b)
}

// clientRun is one end-to-end run's operations and what their clients
// saw.
type clientRun struct {
	ops, dups, workers int
	tenant             string
	proxies            []*lossyProxy
	urls               []string
	tr                 *idemclient.Transport
	client             *http.Client

	attempts, retries atomic.Int64
	mu                sync.Mutex
	statuses          map[int]int // attempts by status; 0 for no answer
	keys              []string    // by operation
	failures          []string
	ended201          int
}

func newClientRun(t *testing.T, tenant string, bases []string) *clientRun {
	cr := &clientRun{ops: 300, dups: 4, workers: 16, tenant: tenant, statuses: map[int]int{}}
	base := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	t.Cleanup(base.CloseIdleConnections)
	for _, b := range bases {
		p := &lossyProxy{target: b, dropEvery: 7, client: &http.Client{Transport: base, Timeout: 20 * time.Second}}
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		cr.proxies = append(cr.proxies, p)
		cr.urls = append(cr.urls, srv.URL)
	}
	tr, err := idemclient.New(&http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}, idemclient.Options{
		MaxAttempts: 40, BaseDelay: 20 * time.Millisecond, MaxDelay: 500 * time.Millisecond,
		OnAttempt: func(a idemclient.Attempt) {
			cr.attempts.Add(1)
			if a.Retry {
				cr.retries.Add(1)
			}
			cr.mu.Lock()
			cr.statuses[a.Status]++
			cr.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cr.tr = tr
	cr.client = &http.Client{Transport: tr}
	cr.keys = make([]string, cr.ops)
	return cr
}

func (cr *clientRun) failf(format string, args ...any) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if len(cr.failures) < 20 {
		cr.failures = append(cr.failures, fmt.Sprintf(format, args...))
	}
}

// run sends every operation's duplicates, workers operations at a time.
func (cr *clientRun) run(ctx context.Context, done *atomic.Int64) time.Duration {
	start := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	for range cr.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cr.operation(ctx, i)
				done.Add(1)
			}
		}()
	}
	for i := range cr.ops {
		next <- i
	}
	close(next)
	wg.Wait()
	return time.Since(start)
}

// operation sends one operation's duplicates at once, each to another
// instance, all with the operation's key.
func (cr *clientRun) operation(ctx context.Context, i int) {
	op, err := cr.tr.NewOperation(time.Now())
	if err != nil {
		cr.failf("operation %d: %v", i, err)
		return
	}
	cr.keys[i] = op.Key
	ctx, cancel := context.WithTimeout(idemclient.WithOperation(ctx, op), 60*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"order":%d,"amountCents":1000,"currency":"EUR"}`, i)
	want := fmt.Sprintf(`{"key":%q,"execution":1}`, op.Key)
	var wg sync.WaitGroup
	for d := range cr.dups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := cr.urls[(i+d)%len(cr.urls)] + "/pay"
			req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
			req.Header.Set("X-Account", cr.tenant)
			req.Header.Set("Content-Type", "application/json")
			resp, err := cr.client.Do(req)
			if err != nil {
				cr.failf("operation %d (%s), duplicate %d: %v", i, op.Key, d, err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode != 201:
				cr.failf("operation %d (%s), duplicate %d: ended with %d %s", i, op.Key, d, resp.StatusCode, b)
			case string(b) != want:
				cr.failf("operation %d (%s), duplicate %d: got %s, want %s", i, op.Key, d, b, want)
			default:
				cr.mu.Lock()
				cr.ended201++
				cr.mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// report checks the run against the upstream's ledger and prints its
// counts.
func (cr *clientRun) report(t *testing.T, name string, led *ledger, took time.Duration) {
	t.Helper()
	for _, f := range cr.failures {
		t.Error(f)
	}
	execs := led.snapshot()
	once := 0
	for i, key := range cr.keys {
		switch n := len(execs[key]); n {
		case 1:
			once++
		default:
			t.Errorf("operation %d (%s) executed %d times", i, key, n)
		}
	}
	if len(execs) != cr.ops {
		t.Errorf("the upstream saw %d keys, want %d", len(execs), cr.ops)
	}
	var lost, forwarded int64
	for _, p := range cr.proxies {
		lost += p.lost.Load()
		forwarded += p.n.Load()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d operations x %d concurrent duplicates over %d instances in %v\n", name, cr.ops, cr.dups, len(cr.urls), took.Round(time.Millisecond))
	fmt.Fprintf(&b, "  requests ended with their own 201: %d of %d; operations executed once: %d of %d\n", cr.ended201, cr.ops*cr.dups, once, cr.ops)
	fmt.Fprintf(&b, "  attempts: %d (retries %d); answers the instances gave: %d, of which lost by the proxy: %d\n", cr.attempts.Load(), cr.retries.Load(), forwarded, lost)
	b.WriteString("  attempts by status (0: no answer):")
	cr.mu.Lock()
	for _, s := range []int{0, 201, 409, 422, 502, 503, 504} {
		if n := cr.statuses[s]; n > 0 {
			fmt.Fprintf(&b, " %d: %d;", s, n)
		}
	}
	for s, n := range cr.statuses {
		switch s {
		case 0, 201, 409, 422, 502, 503, 504:
		default:
			fmt.Fprintf(&b, " %d: %d;", s, n)
		}
	}
	cr.mu.Unlock()
	t.Log(b.String())
}

// clientFault runs do once a third of the operations are done.
func clientFault(cr *clientRun, done *atomic.Int64, do func()) chan struct{} {
	end := make(chan struct{})
	go func() {
		defer close(end)
		deadline := time.Now().Add(2 * time.Minute)
		for done.Load() < int64(cr.ops/3) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		do()
	}()
	return end
}

// TestClientEndToEndRedis: three instances sharing a Redis server the
// test runs (append-only, synced at every write), killed and started
// again 1.5 s later at a third of the operations: longer than the store
// client's own retries cover, so the instances answer 503 meanwhile.
func TestClientEndToEndRedis(t *testing.T) {
	requireLoad(t)
	testenv.Lookup(t, testenv.Redis, "redis://127.0.0.1:6379/0")
	srv := startRedis(t)
	c := startCluster(t, 3, []string{"--store", "redis://" + srv.addr + "/0"}, 20*time.Millisecond)
	cr := newClientRun(t, runTenant("client-Redis"), c.bases())
	var done atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	end := clientFault(cr, &done, func() {
		srv.kill()
		time.Sleep(1500 * time.Millisecond)
		srv.start(t)
	})
	took := cr.run(ctx, &done)
	<-end
	cr.report(t, "Redis, lost responses and the server killed and restarted", c.led, took)
}

// TestClientEndToEndPostgres: three instances sharing a PostgreSQL table;
// the instances' backends are terminated five times, 200 ms apart, at a
// third of the operations (the server itself is shared with other tests).
func TestClientEndToEndPostgres(t *testing.T) {
	requireLoad(t)
	pgURL := testenv.Lookup(t, testenv.Postgres, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	app := fmt.Sprintf("idemprint_client_%d", time.Now().UnixNano())
	c := startCluster(t, 3, []string{"--store", withParam(t, pgURL, "application_name", app)}, 20*time.Millisecond)
	cr := newClientRun(t, runTenant("client-PostgreSQL"), c.bases())
	pgPurger(pgURL).after(t, cr.tenant)
	pool, err := pgxpool.New(context.Background(), pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var done atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	terminated := 0
	end := clientFault(cr, &done, func() { terminated = terminateBackends(t, pool, app) })
	took := cr.run(ctx, &done)
	<-end
	cr.report(t, fmt.Sprintf("PostgreSQL, lost responses and %d backends of the instances terminated", terminated), c.led, took)
}
