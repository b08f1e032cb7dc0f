package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeTemp writes content to a file in a fresh temporary directory.
func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLint(t *testing.T) {
	syntax := writeTemp(t, "syntax.json", "{\n  \"rules\": [\n    {\"route\": \"POST /a\",}\n  ]\n}\n")
	checks := writeTemp(t, "checks.json", `{
  "defaults": {"retry_after": "20s"},
  "rules": [
    {"route": "POST /a/b"},
    {"route": "POST /{x}/b", "lease": "10s"},
    {"route": "POST /a/{y}", "on_mismatch": "replay", "store_intent": true},
    {"route": "POST /c", "ttl": "+1h", "replay_header": "Content-Type: text/plain"}
  ]
}`)
	for _, tc := range []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string // stderr: a substring
		prefix         bool   // stdout: only a prefix (the message is package canonical's)
	}{
		{"Clean/Seed", []string{"../../testdata/policy/payments.json"}, 0, "", "", false},
		{"Problems/Broken", []string{"../../testdata/policy/broken.json"}, 1, `../../testdata/policy/broken.json:3:12 (byte 29) at /defaults/ttl: invalid duration "1d": Go durations have no days; write hours, such as "24h"
../../testdata/policy/broken.json:9:7 (byte 120) at /rules/0/onMismatch: unknown field "onMismatch" (did you mean "on_mismatch"?)
../../testdata/policy/broken.json:10:24 (byte 167) at /rules/0/cache/1: "201" is redundant: "2xx" holds it
../../testdata/policy/broken.json:14:34 (byte 258) at /rules/1/fingerprint/intent/0: invalid path: "amount*": wildcards ('*', '?') are not supported: name every intent field; escape a literal one with '\'
../../testdata/policy/broken.json:15:26 (byte 296) at /rules/1/mismatch_status: mismatch_status 500 is not allowed: want 422 (the IETF draft), 409 or 400
../../testdata/policy/broken.json:18:16 (byte 328) at /rules/2/route: unreachable: /rules/0 (POST /v1/payments) comes first and matches every path this route matches
../../testdata/policy/broken.json:20:26 (byte 405) at /rules/2/mismatch_status: mismatch_status has no effect: on_mismatch is "replay", not "reject"
`, "broken.json: 7 problems", false},
		{"Problems/Syntax", []string{syntax}, 1, syntax + ":3:25 (byte 39) at /rules/0: ", "1 problem\n", true},
		{"Problems/Checks", []string{checks}, 1, checks + `:5:39 (byte 119) at /rules/1/lease: retry_after (20s) is longer than the lease (10s): a client would wait past a reservation's end
` + checks + `:6:71 (byte 197) at /rules/2/store_intent: store_intent has no effect: on_mismatch is "replay", not "reject", so no rejection lists differing fields
` + checks + `:7:33 (byte 236) at /rules/3/ttl: invalid duration "+1h": no sign: write it as "1h"
` + checks + `:7:57 (byte 260) at /rules/3/replay_header: invalid replay_header "Content-Type: text/plain": Content-Type describes the stored response or its connection; the replay header may not replace it
`, "4 problems", false},
		{"Usage/NoArgs", nil, 2, "", "usage: idemprint lint POLICY", false},
		{"Usage/TwoFiles", []string{"a.json", "b.json"}, 2, "", "usage: idemprint lint POLICY", false},
		{"Usage/UnknownFlag", []string{"--strict", "a.json"}, 2, "", "flag provided but not defined", false},
		{"Usage/Help", []string{"-h"}, 0, "", "usage: idemprint lint POLICY", false},
		{"Error/NoFile", []string{"testdata/does-not-exist.json"}, 2, "", "no such file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runLint(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("runLint(%q) = %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr.String())
			}
			got := stdout.String()
			if tc.prefix && strings.HasPrefix(got, tc.stdout) && strings.Count(got, "\n") == 1 {
				got = tc.stdout
			}
			if diff := cmp.Diff(tc.stdout, got); diff != "" {
				t.Errorf("runLint(%q) stdout mismatch (-want +got):\n%s", tc.args, diff)
			}
			if !strings.Contains(stderr.String(), tc.stderr) || (tc.stderr == "") != (stderr.Len() == 0) {
				t.Errorf("runLint(%q) stderr = %q, want it to contain %q", tc.args, stderr.String(), tc.stderr)
			}
		})
	}
}

// TestLintThroughRun checks that run dispatches to lint.
func TestLintThroughRun(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"lint", "../../testdata/policy/broken.json"}, nil, &stdout, &stderr); code != 1 || strings.Count(stdout.String(), "\n") != 7 {
		t.Errorf("run lint = %d with %q", code, stdout.String())
	}
}
