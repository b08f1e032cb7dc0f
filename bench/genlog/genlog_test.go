package genlog_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/idemprint/idemprint/audit"
	"github.com/idemprint/idemprint/bench/genlog"
	"github.com/idemprint/idemprint/policy"
)

// TestLog checks that a log is the same for a seed, is read without a
// malformed or late request, and has retries, mismatches and suggestions.
func TestLog(t *testing.T) {
	var a, b bytes.Buffer
	o := genlog.Options{Requests: 5000, Seed: 7}
	if err := genlog.Write(&a, o); err != nil {
		t.Fatal(err)
	}
	if err := genlog.Write(&b, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two logs of one seed differ")
	}
	pol, err := policy.Parse([]byte(genlog.Policy))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Run(context.Background(), pol, []audit.Input{{Name: "log", R: &a, Size: -1}}, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 5000 || rep.Malformed != 0 || rep.Late != 0 {
		t.Fatalf("decided %d, malformed %d, late %d; want 5000, 0, 0", rep.Requests, rep.Malformed, rep.Late)
	}
	pay := rep.Rules[0]
	if pay.Retries == 0 || pay.Mismatches == 0 || pay.Patch == nil || pay.Suggestions[0].Ignore != "clientTimestamp" {
		t.Errorf("payments: retries %d, mismatches %d, suggestions %+v; want some, some, clientTimestamp", pay.Retries, pay.Mismatches, pay.Suggestions)
	}
}
