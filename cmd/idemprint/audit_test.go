package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/idemprint/idemprint/audit"
)

const (
	auditPolicy = "../../testdata/audit/policy.json"
	auditLog    = "../../testdata/audit/payments.jsonl"
)

func TestAuditExitStatus(t *testing.T) {
	clean := writeTemp(t, "clean.jsonl", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/v1/payments","tenant":"a","headers":{"Idempotency-Key":"k"},"body":{"amountCents":1,"currency":"EUR","destination":{"iban":"X"}},"status":201}`+"\n")
	broken := writeTemp(t, "broken.jsonl", `{"time":"2025-01-06T09:00:00Z","method":"POST","path":"/v1/payments"}`+"\nnot json\n")
	for _, tt := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{"Findings", []string{"audit", "--policy", auditPolicy, auditLog}, "", exitFail, ""},
		{"Clean", []string{"audit", "--policy", auditPolicy, clean}, "", exitOK, ""},
		{"Stdin", []string{"audit", "--policy", auditPolicy, "-"}, "", exitOK, ""},
		{"MalformedLine", []string{"audit", "--policy", auditPolicy, broken}, "", exitFail, ""},
		{"Strict", []string{"audit", "--strict", "--policy", auditPolicy, broken}, "", exitUsage, "idemprint: audit: " + broken + ":2: malformed request: not a JSON text\n"},
		{"Usage/NoPolicy", []string{"audit", auditLog}, "", exitUsage, ""},
		{"Usage/NoLog", []string{"audit", "--policy", auditPolicy}, "", exitUsage, ""},
		{"Usage/MissingLog", []string{"audit", "--policy", auditPolicy, "does-not-exist.jsonl"}, "", exitUsage, ""},
		{"Input/NotALog", []string{"audit", "--policy", auditPolicy, "-"}, "a,b,c\n", exitUsage, "idemprint: audit: <stdin>: unknown log format: neither JSON Lines nor a HAR file: it does not start with '{'\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := runCLI(tt.args, tt.stdin)
			if got.Code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got.Code, tt.code, got.Stderr)
			}
			if tt.stderr != "" && got.Stderr != tt.stderr {
				t.Errorf("stderr = %q, want %q", got.Stderr, tt.stderr)
			}
			if got.Code != exitUsage && got.Stderr != "" {
				t.Errorf("stderr = %q, want nothing: it is not a terminal", got.Stderr)
			}
		})
	}
}

// TestAuditPatchLints splices the suggested patch into the policy and
// checks that lint accepts it.
func TestAuditPatchLints(t *testing.T) {
	got := runCLI([]string{"audit", "--json", "--policy", auditPolicy, auditLog}, "")
	var rep audit.Report
	if err := json.Unmarshal([]byte(got.Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Rules[0].Patch == nil {
		t.Fatal("no patch suggested")
	}
	src, err := os.ReadFile(auditPolicy)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := rep.Rules[0].Patch.Apply(src)
	if err != nil {
		t.Fatal(err)
	}
	name := writeTemp(t, "patched.json", string(patched))
	if lint := runCLI([]string{"lint", name}, ""); lint.Code != exitOK {
		t.Errorf("lint of the patched policy: %+v\n%s", lint, patched)
	}
	again := runCLI([]string{"audit", "--policy", name, auditLog}, "")
	if !strings.Contains(again.Stdout, "mismatches    1\n") {
		t.Errorf("audit with the patched policy:\n%s", again.Stdout)
	}
}
