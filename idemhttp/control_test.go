package idemhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/store"
)

// A proxy whose upstream refused the connection releases the reservation:
// nothing executed, so a retry runs, even though the rule would cache the
// status.
func TestReleaseReservation(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		src := `{"defaults": {"methods": []}, "rules": [{"route": "POST /api/payments", "cache": ["2xx", "5xx"]}]}`
		a := newApp(t, newStore(t), src, idemhttp.Options{})
		refused := true
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			if refused {
				if !idemhttp.ReleaseReservation(w) {
					t.Error("ReleaseReservation found no reservation")
				}
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			w.WriteHeader(201)
		}
		if w := a.send("acme", "k", firstPayment); w.Code != 502 || a.lastEvent().Outcome != idemhttp.Released {
			t.Fatalf("refused upstream = %d %v, want 502 released", w.Code, a.lastEvent().Outcome)
		}
		refused = false
		if w := a.send("acme", "k", firstPayment); w.Code != 201 || a.executions("acme", "k") != 2 {
			t.Errorf("retry = %d after %d executions, want 201 after 2", w.Code, a.executions("acme", "k"))
		}
	})
}

// A proxy that cannot tell whether the upstream executed holds the
// reservation: retries get 409 until the lease lapses, then take over.
func TestHoldReservation(t *testing.T) {
	eachBackend(t, func(t *testing.T, newStore func(*testing.T) store.Store) {
		a := newApp(t, newStore(t), shortLease, idemhttp.Options{})
		held := true
		a.respond = func(w http.ResponseWriter, r *http.Request) {
			if held {
				idemhttp.HoldReservation(w)
				w.WriteHeader(http.StatusGatewayTimeout)
				return
			}
			w.WriteHeader(201)
		}
		if w := a.send("acme", "k", firstPayment); w.Code != 504 || a.lastEvent().Outcome != idemhttp.Held {
			t.Fatalf("timed-out upstream = %d %v, want 504 held", w.Code, a.lastEvent().Outcome)
		}
		if w := a.send("acme", "k", firstPayment); w.Code != 409 {
			t.Errorf("quick retry = %d, want 409 while the lease runs", w.Code)
		}
		time.Sleep(400 * time.Millisecond) // the 300 ms lease lapses
		held = false
		if w := a.send("acme", "k", firstPayment); w.Code != 201 {
			t.Errorf("retry after the lease = %d, want a takeover (201)", w.Code)
		}
	})
}

// A handler that holds its reservation and then aborts, as
// httputil.ReverseProxy does when the upstream breaks off mid-response,
// keeps holding it: the upstream may have executed.
func TestHoldThenAbort(t *testing.T) {
	a := newApp(t, memory(t), shortLease, idemhttp.Options{})
	aborts := true
	a.respond = func(w http.ResponseWriter, r *http.Request) {
		if aborts {
			w.WriteHeader(201)
			w.Write([]byte(`{"id":`))
			idemhttp.HoldReservation(w)
			panic(http.ErrAbortHandler)
		}
		w.WriteHeader(201)
	}
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler to go on", p)
			}
		}()
		a.send("acme", "k", firstPayment)
	}()
	if ev := a.lastEvent(); ev.Outcome != idemhttp.Held {
		t.Fatalf("event outcome = %v, want held", ev.Outcome)
	}
	aborts = false
	if w := a.send("acme", "k", firstPayment); w.Code != 409 || a.executions("acme", "k") != 1 {
		t.Errorf("quick retry = %d after %d executions, want 409 after 1", w.Code, a.executions("acme", "k"))
	}
	time.Sleep(400 * time.Millisecond) // the 300 ms lease lapses
	if w := a.send("acme", "k", firstPayment); w.Code != 201 || a.executions("acme", "k") != 2 {
		t.Errorf("retry after the lease = %d after %d executions, want a takeover (201, 2)", w.Code, a.executions("acme", "k"))
	}
}

// Outside the middleware the functions report false.
func TestControlOutside(t *testing.T) {
	w := httptest.NewRecorder()
	if idemhttp.ReleaseReservation(w) || idemhttp.HoldReservation(w) {
		t.Error("a plain ResponseWriter has a reservation")
	}
}
