package idemhttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// shortLease is paymentsPolicy with a lease short enough to lapse in a
// test.
var shortLease = strings.Replace(paymentsPolicy, `"lease": "30s"`, `"lease": "300ms"`, 1)

// faultyStore wraps a store and fails the operations its hooks say.
type faultyStore struct {
	store.Store
	reserve func() error
	write   func(rec policy.Record) error
	// lose, when it says so, lets a write happen and then reports it
	// failed, as when the store's reply is lost.
	lose  func(rec policy.Record) bool
	calls atomic.Int64
}

func (s *faultyStore) Reserve(ctx context.Context, r store.Reservation) (store.Outcome, error) {
	s.calls.Add(1)
	if s.reserve != nil {
		if err := s.reserve(); err != nil {
			return store.Outcome{}, err
		}
	}
	return s.Store.Reserve(ctx, r)
}

func (s *faultyStore) Write(ctx context.Context, rec policy.Record, g store.Guard) error {
	s.calls.Add(1)
	if s.write != nil {
		if err := s.write(rec); err != nil {
			return err
		}
	}
	err := s.Store.Write(ctx, rec, g)
	if err == nil && s.lose != nil && s.lose(rec) {
		return errDown
	}
	return err
}

func memory(t *testing.T) store.Store { return backends()[0].new(t) }

var errDown = &store.Error{Op: "test", Kind: store.ErrUnavailable, Err: errors.New("connection refused")}

// A panicking handler releases its reservation, and the panic goes on.
func TestPanicReleases(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), paymentsPolicy, idemhttp.Options{})
		panics := true
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			if panics {
				panic("handler bug")
			}
			w.WriteHeader(201)
		}
		func() {
			defer func() {
				if p := recover(); p != "handler bug" {
					t.Errorf("recovered %v, want the handler's panic to go on", p)
				}
			}()
			a.send("acme", "k", firstPayment)
		}()
		if ev := a.lastEvent(); ev.Outcome != idemhttp.Panicked {
			t.Errorf("event outcome = %v, want panicked", ev.Outcome)
		}
		panics = false
		if w := a.send("acme", "k", firstPayment); w.Code != 201 || a.executions("acme", "k") != 2 {
			t.Errorf("retry after a panic = %d after %d executions, want a new execution (201, 2)", w.Code, a.executions("acme", "k"))
		}
	})
}

// A client that disconnects mid-handler does not cancel the completion:
// its retry replays the answer it never received.
func TestClientDisconnect(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), paymentsPolicy, idemhttp.Options{})
		started := make(chan struct{})
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-r.Context().Done() // the client is gone
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"pay_late"}`))
		}
		srv := httptest.NewServer(a.handler)
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/payments", strings.NewReader(firstPayment))
		req.Header.Set("X-Tenant", "acme")
		req.Header.Set("Idempotency-Key", "k")
		if _, err := srv.Client().Do(req); err == nil {
			t.Fatal("the canceled request succeeded")
		}
		// The completion runs after the handler returns: retry until it is done.
		deadline := time.Now().Add(5 * time.Second)
		for {
			w := a.send("acme", "k", firstPayment)
			if w.Code == 201 {
				if w.Body.String() != `{"id":"pay_late"}` || w.Header().Get("Idempotent-Replayed") != "true" {
					t.Errorf("retry = %s %v, want the replay of the answer the client never got", w.Body, w.Header())
				}
				break
			}
			if w.Code != 409 || time.Now().After(deadline) {
				t.Fatalf("retry after a disconnect = %d %s, want a replay", w.Code, w.Body)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n := a.executions("acme", "k"); n != 1 {
			t.Errorf("executed %d times, want 1", n)
		}
	})
}

// A handler that runs past its lease keeps its key: the lease is renewed,
// so a duplicate meanwhile is told to wait, not run beside it.
func TestLongHandlerRenews(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		st := &faultyStore{Store: newStore(t)}
		a := newApp(t, st, shortLease, idemhttp.Options{})
		release := make(chan struct{})
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			<-release
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"pay_slow"}`))
		}
		done := make(chan *httptest.ResponseRecorder)
		go func() { done <- a.send("acme", "k", firstPayment) }()
		time.Sleep(900 * time.Millisecond) // three leases
		if w := a.send("acme", "k", firstPayment); w.Code != 409 {
			t.Errorf("duplicate while a long handler runs = %d %s, want 409", w.Code, w.Body)
		}
		close(release)
		if w := <-done; w.Code != 201 {
			t.Fatalf("long request = %d", w.Code)
		}
		ev := a.lastEvent()
		if ev.Outcome != idemhttp.Stored || ev.StoreCalls < 4 {
			t.Errorf("long request event = %v in %d store calls, want stored after at least two renewals", ev.Outcome, ev.StoreCalls)
		}
		if n := a.executions("acme", "k"); n != 1 {
			t.Errorf("executed %d times, want 1", n)
		}
	})
}

// A request under a rule with a short lease is renewed in time even when
// the renewals loop was sleeping the long tick of another rule's lease
// when it arrived.
func TestShortLeaseAfterLongLease(t *testing.T) {
	pol := strings.Replace(paymentsPolicy, `"cache": ["2xx", "4xx", "!429"]}`,
		`"cache": ["2xx", "4xx", "!429"], "lease": "300ms"},
    {"route": "POST /api/slow", "lease": "30s"}`, 1)
	a := newApp(t, memory(t), pol, idemhttp.Options{})
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	var entered atomic.Int32
	a.respond = func(w http.ResponseWriter, r *http.Request) {
		if entered.Add(1) <= 2 { // a duplicate that executes answers at once
			started <- struct{}{}
			<-release
		}
		w.WriteHeader(201)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(release)
	wg.Add(2)
	go func() { // the loop starts, and sleeps a tick of 5 s
		defer wg.Done()
		r := httptest.NewRequest("POST", "/api/slow", strings.NewReader(`{}`))
		r.Header.Set("X-Tenant", "acme")
		r.Header.Set("Idempotency-Key", "slow")
		a.handler.ServeHTTP(httptest.NewRecorder(), r)
	}()
	<-started
	time.Sleep(50 * time.Millisecond) // the loop is asleep
	go func() {
		defer wg.Done()
		a.send("acme", "k", firstPayment)
	}()
	<-started
	time.Sleep(900 * time.Millisecond) // three leases of the short rule
	if w := a.send("acme", "k", firstPayment); w.Code != 409 {
		t.Errorf("duplicate while a handler with a short lease runs = %d %s, want 409", w.Code, w.Body)
	}
}

// A holder whose lease lapsed (its renewals failed) and was taken over
// does not overwrite the new holder's record: its completion is refused,
// logged and reported.
func TestOvertakenCompletion(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		var renewalsFail atomic.Bool
		renewalsFail.Store(true)
		st := &faultyStore{Store: newStore(t)}
		st.write = func(rec policy.Record) error {
			if rec.State == policy.StateInFlight && renewalsFail.Load() {
				return errDown
			}
			return nil
		}
		a := newApp(t, st, shortLease, idemhttp.Options{})
		release := make(chan struct{})
		var calls atomic.Int64
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				<-release
				w.WriteHeader(201)
				w.Write([]byte(`{"id":"first"}`))
				return
			}
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"second"}`))
		}
		done := make(chan struct{})
		go func() { a.send("acme", "k", firstPayment); close(done) }()
		time.Sleep(450 * time.Millisecond) // the lease lapses
		renewalsFail.Store(false)
		if w := a.send("acme", "k", firstPayment); w.Body.String() != `{"id":"second"}` {
			t.Fatalf("retry after the lease lapsed = %d %s, want a takeover", w.Code, w.Body)
		}
		close(release)
		<-done
		ev := a.lastEvent()
		if ev.Outcome != idemhttp.Overtaken || !errors.Is(ev.Err, store.ErrConflict) {
			t.Errorf("overtaken holder's event = %v %v, want overtaken with ErrConflict", ev.Outcome, ev.Err)
		}
		if w := a.send("acme", "k", firstPayment); w.Body.String() != `{"id":"second"}` {
			t.Errorf("replay = %s, want the new holder's answer", w.Body)
		}
	})
}

// A response larger than the limit is sent in full and never executed
// again; its retries are told that it was not kept.
func TestOversizedResponse(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), paymentsPolicy, idemhttp.Options{MaxResponseBody: 1024})
		big := strings.Repeat("x", 4096)
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(201)
			for i := 0; i < len(big); i += 1000 {
				w.Write([]byte(big[i:min(i+1000, len(big))]))
			}
		}
		if w := a.send("acme", "k", firstPayment); w.Code != 201 || w.Body.String() != big {
			t.Fatalf("first answer = %d with %d bytes, want 201 with the whole 4096", w.Code, w.Body.Len())
		}
		if ev := a.lastEvent(); ev.Outcome != idemhttp.NotKept {
			t.Errorf("event = %v, want not-kept", ev.Outcome)
		}
		w := a.send("acme", "k", firstPayment)
		if w.Code != 409 || problemOf(t, w)["type"] != policy.TypeResponseNotKept || strings.Contains(w.Body.String(), "xxxx") {
			t.Errorf("retry = %d %s, want a 409 response-not-kept problem and no truncated body", w.Code, w.Body)
		}
		if n := a.executions("acme", "k"); n != 1 {
			t.Errorf("executed %d times, want 1", n)
		}
	})
}

// A handler that hijacks the connection: the middleware sees no response,
// so the request is completed as executed with its response not kept.
func TestHijack(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), paymentsPolicy, idemhttp.Options{})
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("Hijack: %v", err)
				return
			}
			defer conn.Close()
			buf.WriteString("HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			buf.Flush()
		}
		srv := httptest.NewServer(a.handler)
		defer srv.Close()
		req, _ := http.NewRequest("POST", srv.URL+"/api/payments", strings.NewReader(firstPayment))
		req.Header.Set("X-Tenant", "acme")
		req.Header.Set("Idempotency-Key", "k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 || string(body) != "ok" {
			t.Fatalf("hijacked answer = %d %q", resp.StatusCode, body)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			w := a.send("acme", "k", firstPayment)
			if w.Code == 409 && problemOf(t, w)["type"] == policy.TypeResponseNotKept {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("retry after a hijack = %d %s, want a response-not-kept problem", w.Code, w.Body)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n := a.executions("acme", "k"); n != 1 {
			t.Errorf("executed %d times, want 1", n)
		}
	})
}

// Streaming works under the middleware: a flushed part reaches the client
// while the handler still runs, through http.Flusher and
// http.ResponseController alike; the whole answer is stored.
func TestStreaming(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), paymentsPolicy, idemhttp.Options{})
		next := make(chan struct{})
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			if err := rc.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
				t.Errorf("SetWriteDeadline through the middleware: %v", err)
			}
			w.WriteHeader(201)
			w.Write([]byte("part1\n"))
			w.(http.Flusher).Flush()
			<-next
			w.Write([]byte("part2\n"))
			if err := rc.Flush(); err != nil {
				t.Errorf("ResponseController.Flush: %v", err)
			}
		}
		srv := httptest.NewServer(a.handler)
		defer srv.Close()
		req, _ := http.NewRequest("POST", srv.URL+"/api/payments", strings.NewReader(firstPayment))
		req.Header.Set("X-Tenant", "acme")
		req.Header.Set("Idempotency-Key", "k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		if err != nil || line != "part1\n" {
			t.Fatalf("first flushed part = %q, %v", line, err)
		}
		close(next)
		rest, _ := io.ReadAll(br)
		if string(rest) != "part2\n" {
			t.Fatalf("rest = %q", rest)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			w := a.send("acme", "k", firstPayment)
			if w.Code == 201 {
				if w.Body.String() != "part1\npart2\n" {
					t.Errorf("replay = %q, want the whole streamed answer", w.Body)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("retry = %d", w.Code)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// A store fault fails closed (503, Retry-After, nothing executed), or
// open when the options say so.
func TestStoreFault(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		for _, failOpen := range []bool{false, true} {
			st := &faultyStore{Store: newStore(t), reserve: func() error { return errDown }}
			a := newApp(t, st, paymentsPolicy, idemhttp.Options{FailOpen: failOpen, StoreRetryAfter: 3})
			w := a.send("acme", "k", firstPayment)
			ev := a.lastEvent()
			if failOpen {
				if w.Code != 201 || a.executions("acme", "k") != 1 || ev.Outcome != idemhttp.FailedOpen {
					t.Errorf("fail open: %d, %d executions, %v; want 201, 1, failed-open", w.Code, a.executions("acme", "k"), ev.Outcome)
				}
				continue
			}
			if w.Code != 503 || w.Header().Get("Retry-After") != "3" || problemOf(t, w)["type"] != idemhttp.TypeStoreUnavailable {
				t.Errorf("fail closed: %d %v %s, want a 503 problem with Retry-After 3", w.Code, w.Header(), w.Body)
			}
			if a.executions("acme", "k") != 0 || ev.Outcome != idemhttp.StoreFailed || !errors.Is(ev.Err, store.ErrUnavailable) {
				t.Errorf("fail closed: %d executions, event %v %v; want none, store-failed", a.executions("acme", "k"), ev.Outcome, ev.Err)
			}
		}
	})
}

// Round trips to the store: two for a first execution, one for a replay,
// a rejection or an in-flight answer, none for a request without a key.
func TestRoundTrips(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		st := &faultyStore{Store: newStore(t)}
		a := newApp(t, st, paymentsPolicy, idemhttp.Options{})
		count := func(what string, want int64, send func()) {
			t.Helper()
			before := st.calls.Load()
			send()
			if got := st.calls.Load() - before; got != want {
				t.Errorf("%s: %d round trips, want %d", what, got, want)
			}
			if ev := a.lastEvent(); int64(ev.StoreCalls) != want {
				t.Errorf("%s: event counts %d store calls, want %d", what, ev.StoreCalls, want)
			}
		}
		count("first execution", 2, func() { a.send("acme", "k", firstPayment) })
		count("replay", 1, func() { a.send("acme", "k", firstPayment) })
		count("key reuse", 1, func() { a.send("acme", "k", `{"amountCents":5}`) })
		count("missing key", 0, func() { a.send("acme", "", firstPayment) })

		block := make(chan struct{})
		a.respond = func(w http.ResponseWriter, r *http.Request) { <-block; w.WriteHeader(201) }
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); a.send("acme", "k2", firstPayment) }()
		for deadline := time.Now().Add(5 * time.Second); a.mw.Stats().Executing == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the first request never started")
			}
		}
		count("in flight", 1, func() { a.send("acme", "k2", firstPayment) })
		close(block)
		wg.Wait()
	})
}

// A renewal whose reply was lost did happen: the holder finds it when its
// next write conflicts, and completes from it, instead of taking itself
// for overtaken and losing the response.
func TestLostRenewalReply(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		var lost atomic.Int64
		st := &faultyStore{Store: newStore(t)}
		st.lose = func(rec policy.Record) bool {
			// The first renewal: in flight, past the reservation's write.
			return rec.State == policy.StateInFlight && lost.CompareAndSwap(0, 1)
		}
		a := newApp(t, st, shortLease, idemhttp.Options{})
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(450 * time.Millisecond) // past the first renewals
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"pay_1"}`))
		}
		if w := a.send("acme", "k", firstPayment); w.Code != 201 {
			t.Fatalf("first answer %d", w.Code)
		}
		if lost.Load() != 1 {
			t.Fatal("no renewal reply was lost")
		}
		if ev := a.lastEvent(); ev.Outcome != idemhttp.Stored {
			t.Fatalf("outcome %v (%v), want stored", ev.Outcome, ev.Err)
		}
		if w := a.send("acme", "k", firstPayment); w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry = %d %v, want the replay", w.Code, w.Header())
		}
	})
}

// stuckStore's first completion hangs until its context ends, as a write
// does behind a pool connection that is slow to open.
type stuckStore struct {
	store.Store
	stuck   atomic.Bool
	waited  atomic.Int64 // how long the hung write waited, in ns
	writes  atomic.Int64 // completions tried
	release chan struct{}
}

func (s *stuckStore) Write(ctx context.Context, rec policy.Record, g store.Guard) error {
	if rec.State != policy.StateCompleted {
		return s.Store.Write(ctx, rec, g)
	}
	s.writes.Add(1)
	if s.stuck.CompareAndSwap(false, true) {
		start := time.Now()
		select {
		case <-ctx.Done():
		case <-s.release: // the test's bound, should the attempt have no deadline
		}
		s.waited.Store(int64(time.Since(start)))
		return &store.Error{Op: "write", Kind: store.ErrUnavailable, Err: ctx.Err()}
	}
	return s.Store.Write(ctx, rec, g)
}

// A completion attempt that hangs gives way to another within a third of
// the lease, so that the record is written before the lease runs out and
// no duplicate can take the key over. (An attempt had the whole completion
// timeout, 10 s by default: under a 2 s lease, serve's load test saw keys
// execute twice after PostgreSQL's backends were terminated.)
func TestStuckCompletionRetried(t *testing.T) {
	st := &stuckStore{Store: memory(t), release: make(chan struct{})}
	a := newApp(t, st, shortLease, idemhttp.Options{})
	timer := time.AfterFunc(5*time.Second, func() { close(st.release) })
	defer timer.Stop()
	start := time.Now()
	if w := a.send("acme", "k", firstPayment); w.Code != 201 {
		t.Fatalf("first request = %d %s, want 201", w.Code, w.Body)
	}
	took := time.Since(start)
	if ev := a.lastEvent(); ev.Outcome != idemhttp.Stored {
		t.Errorf("event = %v %v, want stored", ev.Outcome, ev.Err)
	}
	if got := time.Duration(st.waited.Load()); got > 200*time.Millisecond {
		t.Errorf("the hung attempt waited %v, want at most a third of the 300ms lease", got)
	}
	if n := st.writes.Load(); n != 2 {
		t.Errorf("%d completion attempts, want 2", n)
	}
	if took > 300*time.Millisecond {
		t.Errorf("the request took %v, more than its 300ms lease", took)
	}
	if w := a.send("acme", "k", firstPayment); w.Code != 201 || a.executions("acme", "k") != 1 {
		t.Errorf("retry = %d, %d executions; want a replay of the one execution", w.Code, a.executions("acme", "k"))
	}
}

// lateRenewalStore writes each renewal at once and answers it late, as a
// store whose reply is slow, and says when the first one was written.
type lateRenewalStore struct {
	store.Store
	late     time.Duration
	written  chan struct{}
	renewals atomic.Int64
}

func (s *lateRenewalStore) Write(ctx context.Context, rec policy.Record, g store.Guard) error {
	err := s.Store.Write(ctx, rec, g)
	if rec.State == policy.StateInFlight && err == nil {
		if s.renewals.Add(1) == 1 {
			close(s.written)
		}
		time.Sleep(s.late)
	}
	return err
}

// A handler that returns while its lease is being renewed is completed
// after the renewal returns, from the record the renewal wrote: its
// response is stored, not taken for overtaken.
func TestReturnDuringRenewal(t *testing.T) {
	st := &lateRenewalStore{Store: memory(t), late: 150 * time.Millisecond, written: make(chan struct{})}
	a := newApp(t, st, shortLease, idemhttp.Options{})
	a.respond = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-st.written:
		case <-time.After(5 * time.Second):
			t.Error("no renewal written within 5s under a 300ms lease")
		}
		w.WriteHeader(201)
		w.Write([]byte(`{"id":"pay_1"}`))
	}
	if w := a.send("acme", "k", firstPayment); w.Code != 201 {
		t.Fatalf("first request = %d %s, want 201", w.Code, w.Body)
	}
	if ev := a.lastEvent(); ev.Outcome != idemhttp.Stored || ev.Err != nil {
		t.Errorf("event = %v %v, want stored", ev.Outcome, ev.Err)
	}
	if w := a.send("acme", "k", firstPayment); w.Code != 201 || w.Header().Get("Idempotent-Replayed") == "" || a.executions("acme", "k") != 1 {
		t.Errorf("retry = %d %v, %d executions; want a replay of the one execution", w.Code, w.Header(), a.executions("acme", "k"))
	}
}
