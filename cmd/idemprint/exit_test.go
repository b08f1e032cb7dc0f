package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestExitStatus runs every command against the exit-status table of
// usage and docs/cli.md: each row of the table, for each command it names.
func TestExitStatus(t *testing.T) {
	dup := writeTemp(t, "dup.json", `{"amountCents":10,"amountCents":10000}`)
	noIBAN := writeTemp(t, "noiban.json", `{"amountCents": 1000, "currency": "EUR"}`)
	badUTF8 := "X-Account: \xff"
	queryPolicy := writeTemp(t, "query.json", `{"rules": [{"route": "POST /v1/payments", "fingerprint": {"query": ["dryRun"]}}]}`)
	const (
		missing = "testdata/does-not-exist.json"
		pay     = "POST /v1/payments"
		badQ    = "POST /v1/payments?dryRun=%zz"
	)
	fpPolicy := func(args ...string) []string {
		return append([]string{"fingerprint", "--policy", seedPolicy, "--route", pay}, args...)
	}
	explain := func(args ...string) []string {
		return append([]string{"explain", "--policy", seedPolicy, "--route", pay}, args...)
	}

	for _, tc := range []struct {
		name        string
		args        []string
		stdin       string
		failStdout  bool // stdout cannot be written
		code        int
		quietStderr bool // a status 1 with the finding on stdout
		help        bool // a status 0 with the flags on stderr, as package flag does
	}{
		// 0: success.
		{name: "canon/OK", args: []string{"canon", pay10}, code: 0},
		{name: "fingerprint/OK", args: []string{"fingerprint", pay10}, code: 0},
		{name: "fingerprint--policy/OK", args: fpPolicy(pay10), code: 0},
		{name: "lint/Clean", args: []string{"lint", seedPolicy}, code: 0},
		{name: "explain/Retry", args: explain(pay10, pay10Retry), code: 0},
		{name: "version", args: []string{"version"}, code: 0},
		{name: "help", args: []string{"help"}, code: 0},
		{name: "canon/Help", args: []string{"canon", "-h"}, code: 0, help: true},
		{name: "explain/Help", args: []string{"explain", "-h"}, code: 0, help: true},

		// 1: a body that is not strict JSON.
		{name: "canon/InvalidJSON", args: []string{"canon", dup}, code: 1},
		{name: "fingerprint/InvalidJSON", args: []string{"fingerprint", dup}, code: 1},
		{name: "fingerprint--policy/InvalidJSON", args: fpPolicy(dup), code: 1},
		{name: "explain/InvalidJSON", args: explain(pay10, dup), code: 1},
		// 1: a request a server rejects.
		{name: "fingerprint/MissingRequired", args: []string{"fingerprint", "--intent", "destination.iban", "--required", "destination.iban", noIBAN}, code: 1},
		{name: "fingerprint/HeaderNotUTF8", args: []string{"fingerprint", "--header", badUTF8, pay10}, code: 1},
		{name: "fingerprint--policy/MissingRequired", args: fpPolicy(noIBAN), code: 1},
		{name: "fingerprint--policy/DeclaredQueryDoesNotParse", args: []string{"fingerprint", "--policy", queryPolicy, "--route", badQ, pay10}, code: 1},
		{name: "explain/MissingRequired", args: explain(noIBAN, pay10), code: 1},
		{name: "explain/DeclaredQueryDoesNotParse", args: []string{"explain", "--policy", queryPolicy, "--route", badQ, pay10, pay10}, code: 1},
		// 1: a policy with problems.
		{name: "lint/PolicyProblems", args: []string{"lint", brokenPolicy}, code: 1},
		{name: "fingerprint--policy/PolicyProblems", args: []string{"fingerprint", "--policy", brokenPolicy, "--route", pay, pay10}, code: 1},
		{name: "explain/PolicyProblems", args: []string{"explain", "--policy", brokenPolicy, "--route", pay, pay10, pay10}, code: 1},
		// 1: no rule matches --route.
		{name: "fingerprint--policy/NoRule", args: []string{"fingerprint", "--policy", seedPolicy, "--route", "GET /v1/payments", pay10}, code: 1},
		// 1: SECOND is not a retry.
		{name: "explain/Conflict", args: explain(pay10, pay10000), code: 1, quietStderr: true},
		{name: "explain/NoRule", args: []string{"explain", "--policy", seedPolicy, "--route", "GET /v1/payments", pay10, pay10}, code: 1, quietStderr: true},

		// 2: usage.
		{name: "NoCommand", args: nil, code: 2},
		{name: "UnknownCommand", args: []string{"frobnicate"}, code: 2},
		{name: "canon/UnknownFlag", args: []string{"canon", "--strict"}, code: 2},
		{name: "canon/ExtraArgument", args: []string{"canon", pay10, pay10}, code: 2},
		{name: "canon/BadFlagValue", args: []string{"canon", "--max-depth", "0"}, stdin: "1", code: 2},
		{name: "fingerprint/UnknownFlag", args: []string{"fingerprint", "--strict"}, code: 2},
		{name: "fingerprint/ExtraArgument", args: []string{"fingerprint", pay10, pay10}, code: 2},
		{name: "fingerprint/BadSpecPath", args: []string{"fingerprint", "--intent", "a|b", pay10}, code: 2},
		{name: "fingerprint/BadHeader", args: []string{"fingerprint", "--header", "nocolon", pay10}, code: 2},
		{name: "fingerprint--policy/BadRoute", args: []string{"fingerprint", "--policy", seedPolicy, "--route", "/v1/payments", pay10}, code: 2},
		{name: "fingerprint--policy/QueryFlag", args: fpPolicy("--query", "x=1", pay10), code: 2},
		{name: "lint/NoArgument", args: []string{"lint"}, code: 2},
		{name: "lint/UnknownFlag", args: []string{"lint", "--strict", seedPolicy}, code: 2},
		{name: "explain/MissingArgument", args: explain(pay10), code: 2},
		{name: "explain/BadStatus", args: explain("--status", "102", pay10, pay10), code: 2},
		{name: "explain/BadRoute", args: []string{"explain", "--policy", seedPolicy, "--route", "POST v1", pay10, pay10}, code: 2},
		// 2: a file that cannot be read.
		{name: "canon/Unreadable", args: []string{"canon", missing}, code: 2},
		{name: "fingerprint/Unreadable", args: []string{"fingerprint", missing}, code: 2},
		{name: "fingerprint--policy/UnreadablePolicy", args: []string{"fingerprint", "--policy", missing, "--route", pay, pay10}, code: 2},
		{name: "fingerprint--policy/UnreadableBody", args: fpPolicy(missing), code: 2},
		{name: "lint/Unreadable", args: []string{"lint", missing}, code: 2},
		{name: "explain/UnreadablePolicy", args: []string{"explain", "--policy", missing, "--route", pay, pay10, pay10}, code: 2},
		{name: "explain/UnreadableBody", args: explain(pay10, missing), code: 2},
		// 2: output that cannot be written.
		{name: "canon/Unwritable", args: []string{"canon", pay10}, failStdout: true, code: 2},
		{name: "fingerprint/Unwritable", args: []string{"fingerprint", pay10}, failStdout: true, code: 2},
		{name: "fingerprint--policy/Unwritable", args: fpPolicy(pay10), failStdout: true, code: 2},
		{name: "explain/Unwritable", args: explain(pay10, pay10000), failStdout: true, code: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			var out interface{ Write([]byte) (int, error) } = &stdout
			if tc.failStdout {
				out = failWriter{}
			}
			code := run(tc.args, strings.NewReader(tc.stdin), out, &stderr)
			if code != tc.code {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr.String())
			}
			// Status 0 is silent on stderr, but for -h; 1 and 2 say why
			// there, except where the finding itself is the output.
			if said := stderr.Len() > 0; said != (tc.code != 0 && !tc.quietStderr || tc.help) {
				t.Errorf("run(%q) stderr = %q; want a message exactly when the status is not 0 or help was asked for", tc.args, stderr.String())
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestHelpListsExitStatus checks that help carries the exit-status table.
func TestHelpListsExitStatus(t *testing.T) {
	got := runCLI([]string{"help"}, "")
	for _, want := range []string{"exit status", "\n  0  success", "\n  1  a body that is not strict JSON", "\n  2  an unknown command or flag"} {
		if !strings.Contains(got.Stdout, want) {
			t.Errorf("help does not contain %q:\n%s", want, got.Stdout)
		}
	}
}
