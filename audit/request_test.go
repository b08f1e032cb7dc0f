package audit

import (
	"bytes"
	"net/http"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/policy"
)

// TestNewRequest checks that newRequest builds the Request that
// rule.NewRequest builds, but for the intent projection.
func TestNewRequest(t *testing.T) {
	pol, log := shippedLog(t)
	n := 0
	for line := range bytes.Lines(log) {
		line = bytes.TrimSpace(line)
		e, _, err := parseLine(string(line), line)
		if err != nil {
			continue
		}
		rule, ok := pol.Match(e.method, e.url.Path)
		if !ok {
			continue
		}
		fr, err := rule.Fingerprinter().HTTPRequest(&http.Request{Method: e.method, URL: e.url, Header: e.header, Host: e.host}, e.body)
		if err != nil {
			t.Fatal(err)
		}
		want, errWant := rule.NewRequest("t", fr)
		got, errGot := newRequest(rule, "t", fr)
		if (errWant == nil) != (errGot == nil) || !cmp.Equal(want, got, cmp.Comparer(func(a, b fingerprint.Fingerprint) bool { return a == b }), cmpopts.IgnoreUnexported(policy.Request{})) {
			t.Errorf("%s:\nnewRequest = %+v, %v\nNewRequest = %+v, %v", line, got, errGot, want, errWant)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d governed requests compared", n)
	}
}

// TestSnapshotIntent checks that the intent document a request keeps, when
// its rule stores intent, is the one the analyzer would compute from its
// snapshot: the analyzer uses the former in place of the latter.
func TestSnapshotIntent(t *testing.T) {
	pol, log := shippedLog(t)
	p := newParser(pol, &Options{})
	n := 0
	for line := range bytes.Lines(log) {
		line = bytes.TrimSpace(line)
		it := item{}
		if it.e, _, it.err = parseLine(string(line), line); it.err != nil {
			continue
		}
		p.govern(&it)
		if it.req.Intent == nil {
			continue
		}
		want, err := it.rule.Fingerprinter().AppendIntent(nil, it.own)
		if err != nil || !bytes.Equal(want, it.req.Intent) {
			t.Errorf("%s:\nkept intent %s\nsnapshot's  %s, %v", line, it.req.Intent, want, err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no request kept its intent")
	}
}

// shippedLog returns the policy and the JSON Lines log under
// testdata/audit.
func shippedLog(t *testing.T) (*policy.Policy, []byte) {
	t.Helper()
	src, err := os.ReadFile("../testdata/audit/policy.json")
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile("../testdata/audit/payments.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return pol, log
}
