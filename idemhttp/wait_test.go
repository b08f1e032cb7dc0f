package idemhttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/store"
)

// waitPolicy lets a retry wait up to 5 s for a running request's result.
var waitPolicy = strings.Replace(paymentsPolicy, `"store_intent": true,`, `"store_intent": true, "wait": "5s",`, 1)

// A retry that meets a running reservation waits for its result and
// replays it; a request with another body does not wait.
func TestWait(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), waitPolicy, idemhttp.Options{})
		release := make(chan struct{})
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			<-release
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"pay_1"}`))
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); a.send("acme", "k", firstPayment) }()
		waitExecuting(t, a, 1)

		// Another body is rejected at once: its answer does not depend on
		// the first request's outcome.
		if w := a.send("acme", "k", `{"orderId":"ord_8842","amountCents":5,"currency":"EUR"}`); w.Code != 422 {
			t.Errorf("mismatch during the first request = %d, want 422", w.Code)
		}
		if ev := a.lastEvent(); ev.Waited != 0 {
			t.Errorf("the mismatch waited %v", ev.Waited)
		}

		answer := make(chan *httptest.ResponseRecorder)
		go func() { answer <- a.send("acme", "k", firstPayment) }()
		for deadline := time.Now().Add(5 * time.Second); a.mw.Stats().Waiting == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the retry never waited")
			}
		}
		close(release)
		w := <-answer
		wg.Wait()
		if w.Code != 201 || w.Body.String() != `{"id":"pay_1"}` || w.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("waiting retry = %d %s %v, want the replay of the first answer", w.Code, w.Body, w.Header())
		}
		if n := a.executions("acme", "k"); n != 1 {
			t.Errorf("executed %d times, want 1", n)
		}
	})
}

// A retry waits no longer than the rule says, then gets the 409.
func TestWaitBounded(t *testing.T) {
	src := strings.Replace(paymentsPolicy, `"store_intent": true,`, `"store_intent": true, "wait": "200ms",`, 1)
	a := newApp(t, memory(t), src, idemhttp.Options{})
	release := make(chan struct{})
	defer close(release)
	a.respond = func(w http.ResponseWriter, r *http.Request) { <-release; w.WriteHeader(201) }
	go a.send("acme", "k", firstPayment)
	waitExecuting(t, a, 1)
	w := a.send("acme", "k", firstPayment)
	if w.Code != 409 || w.Header().Get("Retry-After") == "" {
		t.Errorf("retry after waiting = %d %v, want 409 with Retry-After", w.Code, w.Header())
	}
	ev := a.lastEvent()
	if ev.Waited <= 0 || ev.Waited > 200*time.Millisecond {
		t.Errorf("waited %v, want some time, at most the rule's 200ms", ev.Waited)
	}
	if ev.StoreCalls < 2 {
		t.Errorf("the waiting retry asked the store %d times, want it to poll", ev.StoreCalls)
	}
}

// waitExecuting waits until n requests run their handler.
func waitExecuting(t *testing.T, a *app, n int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); a.mw.Stats().Executing < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first request never started")
		}
	}
}

// Headers that must never be replayed are sent to the first client only:
// cookies, credentials, hop-by-hop headers and those the rule excludes.
// Every value of a multi-valued header is replayed.
func TestHeadersNotReplayed(t *testing.T) {
	src := strings.Replace(paymentsPolicy, `"store_intent": true,`, `"store_intent": true, "exclude_headers": ["X-Request-Id"],`, 1)
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), src, idemhttp.Options{})
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h["Set-Cookie"] = []string{"session=secret; HttpOnly", "theme=dark"}
			h.Set("X-Request-Id", "req-1")
			h.Set("Keep-Alive", "timeout=5")
			h["Link"] = []string{"</a>; rel=next", "</b>; rel=prev"}
			h.Set("Content-Type", "application/json")
			w.WriteHeader(201)
			w.Write([]byte(`{"id":"pay_1"}`))
		}
		first := a.send("acme", "k", firstPayment)
		if len(first.Header()["Set-Cookie"]) != 2 || first.Header().Get("X-Request-Id") == "" {
			t.Fatalf("the first client did not get its headers: %v", first.Header())
		}
		retry := a.send("acme", "k", firstPayment)
		for _, name := range []string{"Set-Cookie", "X-Request-Id", "Keep-Alive"} {
			if v := retry.Header()[name]; v != nil {
				t.Errorf("replay carries %s: %q", name, v)
			}
		}
		if got := retry.Header()["Link"]; len(got) != 2 || got[0] != "</a>; rel=next" || got[1] != "</b>; rel=prev" {
			t.Errorf("replayed Link = %q, want both values, separately", got)
		}
		if retry.Header().Get("Content-Type") != "application/json" {
			t.Errorf("replayed Content-Type = %q", retry.Header().Get("Content-Type"))
		}
	})
}

// Stats counts a request as executing while its handler runs, and no
// longer once the handler returned or panicked.
func TestStatsExecuting(t *testing.T) {
	a := newApp(t, memory(t), paymentsPolicy, idemhttp.Options{})
	release := make(chan struct{})
	a.respond = func(w http.ResponseWriter, r *http.Request) {
		<-release
		if r.Header.Get("Idempotency-Key") == "boom" {
			panic("handler bug")
		}
		w.WriteHeader(201)
	}
	for _, key := range []string{"k", "boom"} {
		done := make(chan any)
		go func() {
			defer func() { done <- recover() }()
			a.send("acme", key, firstPayment)
		}()
		waitExecuting(t, a, 1)
		release <- struct{}{}
		if p := <-done; (p != nil) != (key == "boom") {
			t.Fatalf("key %s: recovered %v", key, p)
		}
		if n := a.mw.Stats().Executing; n != 0 {
			t.Errorf("key %s: Executing = %d after the handler ended, want 0", key, n)
		}
	}
}
