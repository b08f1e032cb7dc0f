package idemhttp_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
)

// The handler reads exactly the bytes the client sent, however they are
// spelled.
func TestHandlerGetsIdenticalBody(t *testing.T) {
	a := newApp(t, memory(t), paymentsPolicy, idemhttp.Options{})
	sent := "{ \"amountCents\" : 1000.0,\n\t\"currency\":\"\\u0045UR\" }"
	var got []byte
	a.handler = a.mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		if r.ContentLength != int64(len(sent)) {
			t.Errorf("ContentLength = %d, want %d", r.ContentLength, len(sent))
		}
		if r.GetBody == nil {
			t.Error("GetBody is nil")
		} else if b, err := r.GetBody(); err != nil {
			t.Errorf("GetBody: %v", err)
		} else if again, _ := io.ReadAll(b); string(again) != sent {
			t.Errorf("GetBody read %q, want %q", again, sent)
		}
		w.WriteHeader(201)
	}))
	if w := a.send("acme", "k", sent); w.Code != 201 {
		t.Fatalf("answer %d %s", w.Code, w.Body)
	}
	if string(got) != sent {
		t.Errorf("handler read %q, want %q", got, sent)
	}
}

// Requests that cannot be fingerprinted are answered with a 400 or 413
// problem that says where, and never executed.
func TestInvalidRequests(t *testing.T) {
	for _, tc := range []struct {
		name   string
		body   string
		chunk  bool // no Content-Length
		status int
		want   map[string]any // members of the problem
	}{
		{
			name: "DuplicateMember", body: "{\"amountCents\":10,\n \"amountCents\":10000}", status: 400,
			want: map[string]any{"type": idemhttp.TypeInvalidBody, "line": 2.0, "column": 2.0, "offset": 20.0, "pointer": "/amountCents"},
		},
		{
			name: "Syntax", body: `{"amountCents":}`, status: 400,
			want: map[string]any{"type": idemhttp.TypeInvalidBody, "line": 1.0, "column": 16.0, "offset": 15.0, "pointer": "/amountCents"},
		},
		{
			name: "TooLarge", body: `{"note":"` + strings.Repeat("x", 2000) + `"}`, status: 413,
			want: map[string]any{"type": idemhttp.TypeBodyTooLarge},
		},
		{
			name: "TooLargeChunked", body: `{"note":"` + strings.Repeat("x", 2000) + `"}`, chunk: true, status: 413,
			want: map[string]any{"type": idemhttp.TypeBodyTooLarge},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newApp(t, memory(t), paymentsPolicy, idemhttp.Options{MaxRequestBody: 1024})
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunk {
				body = io.MultiReader(body) // hides the length
			}
			r := httptest.NewRequest("POST", "/api/payments", body)
			if tc.chunk {
				r.ContentLength = -1
			}
			r.Header.Set("X-Tenant", "acme")
			r.Header.Set("Idempotency-Key", "k")
			w := httptest.NewRecorder()
			a.handler.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Fatalf("status %d %s, want %d", w.Code, w.Body, tc.status)
			}
			p := problemOf(t, w)
			got := map[string]any{}
			for k := range tc.want {
				got[k] = p[k]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problem %s mismatch (-want +got):\n%s", w.Body, diff)
			}
			if a.executions("acme", "k") != 0 {
				t.Error("the handler ran")
			}
			if ev := a.lastEvent(); ev.Outcome != idemhttp.Invalid {
				t.Errorf("event outcome %v, want invalid", ev.Outcome)
			}
		})
	}
}

// A required intent value that is missing is a 400 problem naming it.
func TestMissingRequiredValue(t *testing.T) {
	src := strings.Replace(paymentsPolicy, `"ignore": ["traceId"]`, `"ignore": ["traceId"], "required": ["amountCents"]`, 1)
	a := newApp(t, memory(t), src, idemhttp.Options{})
	w := a.send("acme", "k", `{"currency":"EUR"}`)
	if w.Code != 400 {
		t.Fatalf("status %d %s, want 400", w.Code, w.Body)
	}
	if p := problemOf(t, w); p["type"] != idemhttp.TypeInvalidRequest || p["name"] != "amountCents" || p["part"] != "body" {
		t.Errorf("problem %s, want an invalid-request problem naming amountCents", w.Body)
	}
}

// There is no shared anonymous tenant: a request whose tenant is unknown
// is refused, unless the service says it has one tenant.
func TestTenant(t *testing.T) {
	a := newApp(t, memory(t), paymentsPolicy, idemhttp.Options{})
	w := a.send("", "k", firstPayment)
	if w.Code != 400 || problemOf(t, w)["type"] != idemhttp.TypeTenantUnknown || a.executions("", "k") != 0 {
		t.Errorf("request without tenant = %d %s, want a 400 tenant-unknown problem, not executed", w.Code, w.Body)
	}
	single := newApp(t, memory(t), paymentsPolicy, idemhttp.Options{SingleTenant: "us"})
	first := single.send("", "k", firstPayment)
	if second := single.send("", "k", firstPayment); first.Code != 201 || second.Body.String() != first.Body.String() {
		t.Errorf("single tenant: %d then %s, want 201 then a replay", first.Code, second.Body)
	}
}

// A missing key is a 400 problem when the rule requires one; an optional
// key's absence passes the request through, body untouched.
func TestMissingKey(t *testing.T) {
	a := newApp(t, memory(t), paymentsPolicy, idemhttp.Options{})
	w := a.send("acme", "", firstPayment)
	if w.Code != 400 || problemOf(t, w)["type"] != policy.TypeMissingKey {
		t.Errorf("missing key = %d %s, want a 400 missing-key problem", w.Code, w.Body)
	}
	optional := strings.Replace(paymentsPolicy, `"methods": []`, `"methods": [], "key": {"required": false}`, 1)
	b := newApp(t, memory(t), optional, idemhttp.Options{})
	for range 2 {
		if w := b.send("acme", "", `{"a":1,"a":2}`); w.Code != 201 { // not strict, but not checked
			t.Errorf("pass-through = %d %s", w.Code, w.Body)
		}
	}
	if ev := b.lastEvent(); ev.Outcome != idemhttp.PassedThrough || ev.StoreCalls != 0 {
		t.Errorf("pass-through event = %v in %d store calls, want passed-through without the store", ev.Outcome, ev.StoreCalls)
	}
}

// Requests no rule governs are untouched and not reported.
func TestUngoverned(t *testing.T) {
	a := newApp(t, memory(t), paymentsPolicy, idemhttp.Options{})
	var got []byte
	h := a.mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.WriteHeader(204)
	}))
	r := httptest.NewRequest("GET", "/api/payments", strings.NewReader("raw"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 204 || !bytes.Equal(got, []byte("raw")) {
		t.Errorf("ungoverned request = %d with body %q", w.Code, got)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.events) != 0 {
		t.Errorf("ungoverned request reported %d events", len(a.events))
	}
}

func TestNewInvalid(t *testing.T) {
	pol, err := policy.Parse([]byte(paymentsPolicy))
	if err != nil {
		t.Fatal(err)
	}
	tenant := func(*http.Request) (string, bool) { return "t", true }
	for name, tc := range map[string]struct {
		pol  *policy.Policy
		opts idemhttp.Options
	}{
		"NoTenant":      {pol, idemhttp.Options{}},
		"BothTenants":   {pol, idemhttp.Options{Tenant: tenant, SingleTenant: "x"}},
		"NoPolicy":      {nil, idemhttp.Options{SingleTenant: "x"}},
		"NegativeLimit": {pol, idemhttp.Options{SingleTenant: "x", MaxRequestBody: -1}},
	} {
		if _, err := idemhttp.New(tc.pol, memory(t), tc.opts); !errors.Is(err, idemhttp.ErrOptions) {
			t.Errorf("%s: error %v, want ErrOptions", name, err)
		}
	}
}
