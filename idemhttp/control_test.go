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

// Outside the middleware the functions report false.
func TestControlOutside(t *testing.T) {
	w := httptest.NewRecorder()
	if idemhttp.ReleaseReservation(w) || idemhttp.HoldReservation(w) {
		t.Error("a plain ResponseWriter has a reservation")
	}
}
