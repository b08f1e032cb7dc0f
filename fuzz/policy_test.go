package fuzz

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// FuzzPolicy feeds random policy files, bodies, keys, statuses and clock
// jumps through Parse, NewRequest, Decide and Complete. Nothing may panic;
// a bad file is a *policy.ParseError whose problems point into the file; and
// every decision is well-formed: an action and a reason, a reservation for
// the execute actions, a problem with a stable type and an allowed status
// for rejections, and a replay only of what was stored for an equal request.
func FuzzPolicy(f *testing.F) {
	for _, name := range []string{"payments.json", "broken.json"} {
		if b, err := os.ReadFile("../testdata/policy/" + name); err == nil {
			f.Add(b, []byte(`{"amountCents":1000,"currency":"EUR","destination":{"iban":"DE89"}}`), []byte(`{"amountCents":1000.0,"currency":"EUR","destination":{"iban":"DE89"},"traceId":"x"}`), "k-1", 201, int64(time.Second))
		}
	}
	f.Add([]byte(`{"rules":[{"route":"POST /v1/a/{id}","on_mismatch":"new","cache":["2xx","4xx","!429"],"lease":"5s","ttl":"1h"}]}`),
		[]byte(`{"a":1}`), []byte(`{"a":2}`), `"quoted"`, 500, int64(2*time.Hour))
	f.Add([]byte(`{"defaults":{"methods":["POST","PUT"],"on_spec_change":"replay"},"rules":[{"route":"PUT /x","on_mismatch":"replay","key":{"syntax":"uuid"}}]}`),
		[]byte(`[]`), []byte(`[1]`), "6F9619FF-8B86-D011-B42D-00CF4FC964FF", 429, int64(-time.Minute))
	f.Add([]byte(`{"rules":[{"route":"POST /p","key":{"required":false,"max_length":4}}]}`), []byte(``), []byte(`null`), "", 200, int64(0))

	f.Fuzz(func(t *testing.T, file, first, second []byte, key string, status int, jump int64) {
		p, err := policy.Parse(file)
		if err != nil {
			var pe *policy.ParseError
			if !errors.As(err, &pe) || len(pe.Findings) == 0 {
				t.Fatalf("Parse error %v (%T) is not a *ParseError with problems", err, err)
			}
			for _, pr := range pe.Findings {
				if pr.Err == nil || pr.Offset < 0 || pr.Offset > int64(len(file)) || pr.Pointer != "" && pr.Pointer[0] != '/' {
					t.Fatalf("malformed problem %#v in a file of %d bytes", pr, len(file))
				}
			}
			return
		}
		now := time.Unix(1_700_000_000, 0)
		for _, rule := range append(p.Rules(), nil) {
			method, path := "POST", "/v1/anything"
			if rule != nil {
				method, path, _ = strings.Cut(rule.Route(), " ")
				path = strings.NewReplacer("{", "v", "}", "").Replace(path)
			}
			// An earlier rule may take this concrete path: use the one that
			// Match picks.
			rule, ok := p.Match(method, path)
			if !ok {
				continue
			}
			hdr := http.Header{}
			if key != "" {
				hdr.Set(rule.KeyHeader(), key)
			}
			newReq := func(body []byte) (policy.Request, bool) {
				req, err := rule.NewRequest("tenant", fingerprint.Request{Method: method, Path: path, Header: hdr, Body: body})
				return req, err == nil
			}
			req1, ok1 := newReq(first)
			req2, ok2 := newReq(second)
			if !ok1 {
				continue
			}
			pk, nk, err := rule.StorageKeys(req1)
			if err != nil {
				continue
			}
			d, err := rule.Decide(req1, nil, nil, now)
			if err != nil {
				t.Fatalf("Decide on an empty store: %v", err)
			}
			checkDecision(t, rule, d)
			if d.Action != policy.Execute {
				continue
			}
			if d.StorageKey != pk || d.Reserve == nil {
				t.Fatalf("Execute at %q with reserve %v, want the primary key %q", d.StorageKey, d.Reserve, pk)
			}
			done, err := rule.Complete(d.Reserve, policy.Response{Status: status, Body: []byte("stored")}, now)
			if err != nil {
				continue // an invalid status is refused, not stored
			}
			if done.State == policy.StateCompleted != rule.Caches(status) {
				t.Fatalf("status %d: completed %v, but Caches says %v", status, done.State == policy.StateCompleted, rule.Caches(status))
			}
			later := now.Add(time.Duration(jump))
			reqs := []policy.Request{req1}
			if ok2 {
				reqs = append(reqs, req2)
			}
			for _, req := range reqs {
				d2, err := rule.Decide(req, &done, nil, later)
				if err != nil {
					t.Fatalf("Decide with the completed record: %v", err)
				}
				checkDecision(t, rule, d2)
				if d2.Action == policy.Replay {
					if done.State != policy.StateCompleted || d2.Response.Status != status || !bytes.Equal(d2.Response.Body, []byte("stored")) {
						t.Fatalf("replayed %d %q from a record in state %v with status %d", d2.Response.Status, d2.Response.Body, done.State, status)
					}
					if req.Fingerprint != done.Fingerprint && rule.OnMismatch() != policy.ResolveReplay {
						t.Fatalf("replayed a record of another fingerprint under on_mismatch %v", rule.OnMismatch())
					}
				}
				if d2.Action == policy.ExecuteAsNew && d2.StorageKey != nk {
					t.Fatalf("execute-as-new at %q, want the new identity %q", d2.StorageKey, nk)
				}
			}
		}
	})
}

// checkDecision checks what every decision must hold.
func checkDecision(t *testing.T, rule *policy.Rule, d policy.Decision) {
	t.Helper()
	if d.Action.String() == "" || d.Reason.String() == "" {
		t.Fatalf("decision without action or reason: %+v", d)
	}
	switch d.Action {
	case policy.Execute, policy.ExecuteAsNew:
		if d.Reserve == nil || d.Reserve.StorageKey != d.StorageKey || d.Reserve.State != policy.StateInFlight {
			t.Fatalf("%v without an in-flight reservation at its storage key: %+v", d.Action, d)
		}
	case policy.Reject:
		pd := d.Problem
		if pd == nil || !strings.HasPrefix(pd.Type, policy.ProblemBase) || pd.Status != d.Response.Status {
			t.Fatalf("reject without a well-formed problem: %+v", d)
		}
		switch pd.Status {
		case 400, 409, 422:
		default:
			t.Fatalf("reject with status %d", pd.Status)
		}
		if !bytes.Contains(d.Response.Body, []byte(`"type":`)) {
			t.Fatalf("reject body %q is not a problem document", d.Response.Body)
		}
	case policy.Replay, policy.PassThrough:
	default:
		t.Fatalf("unknown action %v", d.Action)
	}
}
