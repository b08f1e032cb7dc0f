package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/policy"
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
	old := writeTemp(t, "old.json", `{"defaults": {"methods": ["POST"]}, "rules": [
  {"route": "POST /v1/payments"},
  {"route": "POST /v1/refunds", "fingerprint": {"intent": ["paymentId"]}},
  {"route": "POST /v1/legacy"}
]}`)
	scoped := writeTemp(t, "scoped.json", `{"defaults": {"methods": []}, "rules": [
  {"route": "POST /v1/payments", "scope": {"route": true}},
  {"route": "POST /v1/refunds", "fingerprint": {"intent": ["paymentId", "amountCents"]}, "on_spec_change": "replay"}
]}`)
	respec := writeTemp(t, "respec.json", `{"defaults": {"methods": ["POST"]}, "rules": [
  {"route": "POST /v1/payments"},
  {"route": "POST /v1/refunds", "fingerprint": {"intent": ["paymentId", "amountCents"]}},
  {"route": "POST /v1/legacy/{id}"}
]}`)
	broken := writeTemp(t, "broken.json", `{"rules": [{"route": "POST /v1/../admin"}]}`)
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
		{"Usage/NoArgs", nil, 2, "", "usage: idemprint lint [--previous OLD] POLICY", false},
		{"Usage/TwoFiles", []string{"a.json", "b.json"}, 2, "", "usage: idemprint lint [--previous OLD] POLICY", false},
		{"Usage/UnknownFlag", []string{"--strict", "a.json"}, 2, "", "flag provided but not defined", false},
		{"Usage/Help", []string{"-h"}, 0, "", "usage: idemprint lint [--previous OLD] POLICY", false},
		{"Error/NoFile", []string{"testdata/does-not-exist.json"}, 2, "", "no such file", false},

		// --previous: every route's impact, exit 1 when one orphans
		// records, the problems of either file first.
		{"Previous/Same", []string{"--previous", old, old}, 0, `POST /v1/payments (` + old + ` /rules/0): unchanged
POST /v1/refunds (` + old + ` /rules/1): unchanged
POST /v1/legacy (` + old + ` /rules/2): unchanged
POST * (` + old + ` /defaults): unchanged
`, "", false},
		{"Previous/Orphans", []string{"--previous", old, scoped}, 1, `POST /v1/payments (` + scoped + ` /rules/0): storage keys change, for the records of POST /v1/payments: scope.route changes from false to true: its records are orphaned, and a retry within the ttl (24h0m0s) executes again
POST /v1/refunds (` + scoped + ` /rules/1): fingerprints change, for the records of POST /v1/refunds: the fingerprint spec changes: a retry cannot be compared with its record, and on_spec_change "replay" replays the stored response
POST /v1/legacy (` + old + ` /rules/2): storage keys change: the new policy no longer governs some of its requests: they pass through, and a retry within the ttl (24h0m0s) executes again
POST * (` + old + ` /defaults): storage keys change: the new policy no longer governs some of its requests: they pass through, and a retry within the ttl (24h0m0s) executes again
`, "orphans the records of 3 routes", false},
		{"Previous/NoOrphans", []string{"--previous", old, respec}, 0, `POST /v1/payments (` + respec + ` /rules/0): unchanged
POST /v1/refunds (` + respec + ` /rules/1): fingerprints change, for the records of POST /v1/refunds: the fingerprint spec changes: a retry cannot be compared with its record, and on_spec_change "reject" rejects it (409)
POST /v1/legacy/{id} (` + respec + ` /rules/2): retries rejected, for the records of POST *: the endpoint changes from POST and each path to POST /v1/legacy/{}: a retry is rejected as made on another endpoint (422)
POST * (` + respec + ` /defaults): unchanged
`, "", false}, // POST /v1/legacy was its own endpoint, as under the defaults
		{"Previous/Problems", []string{"--previous", broken, old}, 1, broken + `:1:22 (byte 21) at /rules/0/route: invalid route "POST /v1/../admin": dot segment ".." (a router cleans it away, so no request path it hands on has one)
`, "broken.json: 1 problem", false},
		{"Previous/NoFile", []string{"--previous", "testdata/does-not-exist.json", old}, 2, "", "no such file", false},
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

// TestLintMany checks that lint prints the first policy.MaxFindings
// problems, then how many more there are, and counts all of them.
func TestLintMany(t *testing.T) {
	var b strings.Builder
	for j := 0; j < 150; j++ {
		fmt.Fprintf(&b, "{\"route\": \"POST /x%d/{a}\"},\n", j)
	}
	for k := 0; k < 150; k++ {
		fmt.Fprintf(&b, "{\"route\": \"POST /{a}/y%d\"},\n", k)
	}
	name := writeTemp(t, "crossing.json", "{\"rules\": [\n"+strings.TrimSuffix(b.String(), ",\n")+"\n]}\n")
	var stdout, stderr bytes.Buffer
	if code := runLint([]string{name}, &stdout, &stderr); code != 1 {
		t.Errorf("runLint = %d, want 1", code)
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != policy.MaxFindings+1 {
		t.Fatalf("%d lines, want %d", len(lines), policy.MaxFindings+1)
	}
	if want := name + ":152:11 (byte "; !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "at /rules/150/route: overlaps /rules/0 (POST /x0/{a})") {
		t.Errorf("first line %q, want it to start with %q and name /rules/0", lines[0], want)
	}
	if got, want := lines[len(lines)-1], "… and 50 more"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	if !strings.Contains(stderr.String(), "150 problems") {
		t.Errorf("stderr = %q, want the count of every problem", stderr.String())
	}
}

// TestLocator checks that the locator, reading a source once, finds the
// lines and columns that canonical.LineColumn finds reading it for every
// offset.
func TestLocator(t *testing.T) {
	for _, src := range []string{
		"",
		"{\n  \"a\": 1\n}\n",
		"{\"é\": \"日本\",\n\"x\": \"\xff\xfe\"}\r\n\n[1]",
		strings.Repeat("ab\ncdé\n", 50),
	} {
		loc := locator{src: []byte(src)}
		for off := int64(-1); off <= int64(len(src))+1; off++ {
			wl, wc := canonical.LineColumn([]byte(src), off)
			if gl, gc := loc.lineCol(off); gl != wl || gc != wc {
				t.Fatalf("lineCol(%q, %d) = %d:%d, want %d:%d", src, off, gl, gc, wl, wc)
			}
		}
		// Offsets going back start the reading again.
		if gl, gc := loc.lineCol(0); gl != 1 || gc != 1 {
			t.Errorf("lineCol(%q, 0) after the end = %d:%d", src, gl, gc)
		}
	}
}
