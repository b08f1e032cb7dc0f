package main

import (
	"bytes"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

// result is what one run of the CLI produced.
type result struct {
	Code           int
	Stdout, Stderr string
}

func runCLI(args []string, stdin string) result {
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return result{code, stdout.String(), stderr.String()}
}

func TestCanon(t *testing.T) {
	pay := writeTemp(t, "pay.json", "{\n  \"amount\": 10,\n  \"note\": \"x\", \"amount\": 10000\n}\n")
	ok := writeTemp(t, "ok.json", `{"b":[1.0,2e0],"a":"\u00e9"}`)
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  result
	}{
		{"File", []string{"canon", ok}, "", result{0, `{"a":"é","b":[1,2]}`, ""}},
		{"Stdin", []string{"canon"}, `[9007199254740993, 1E400]`, result{1, "", "idemprint: <stdin>:1:20 (byte 19) at /1: number \"1E400\" is beyond the range of a double\n"}},
		{"StdinDash", []string{"canon", "-"}, ` {"z":1,"y":2} `, result{0, `{"y":2,"z":1}`, ""}},
		{"Exact", []string{"canon", "--numbers", "exact"}, `[9007199254740993, 1E400, 1.50]`, result{0, `[9007199254740993,1e+400,1.5]`, ""}},
		{"JCS", []string{"canon", "--numbers=jcs"}, `[9007199254740993]`, result{0, `[9007199254740992]`, ""}},
		{"Duplicate", []string{"canon", pay}, "", result{1, "", "idemprint: " + pay + ":3:16 (byte 33) at /amount: duplicate member name \"amount\"\n"}},
		{"MaxDepth", []string{"canon", "--max-depth", "2"}, `[[[1]]]`, result{1, "", "idemprint: <stdin>:1:3 (byte 2) at /0/0: nesting deeper than 2\n"}},
		{"LineColCountsCharacters", []string{"canon"}, "{\"é\":\n  \"ü\" x}", result{1, "", "idemprint: <stdin>:2:7 (byte 14): invalid character 'x' after object member, want ',' or '}'\n"}},
		{"Usage/BadMode", []string{"canon", "--numbers", "float"}, "", result{2, "", ""}},
		{"Usage/BadDepth", []string{"canon", "--max-depth", "0"}, "1", result{2, "", "idemprint: --max-depth must be positive\n"}},
		{"Usage/TwoFiles", []string{"canon", "a", "b"}, "", result{2, "", ""}},
		{"Usage/NoFile", []string{"canon", "does-not-exist.json"}, "", result{2, "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runCLI(tt.args, tt.stdin)
			if tt.want.Stderr == "" && tt.want.Code == 2 {
				// Usage errors: only the status and that something was said.
				if got.Code != 2 || got.Stdout != "" || got.Stderr == "" {
					t.Errorf("run(%q) = %+v, want status 2, usage on stderr", tt.args, got)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("run(%q) mismatch (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestCanonMatchesLibrary checks the promise that `idemprint canon x |
// sha256sum` hashes the canonical form: exactly its bytes, no newline.
func TestCanonMatchesLibrary(t *testing.T) {
	in := `{"amountCents": 1000.0, "currency": "EUR", "traceId": "t-1"}`
	got := runCLI([]string{"canon"}, in)
	want, err := canonical.Transform([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if got.Code != 0 || got.Stdout != string(want) {
		t.Fatalf("canon = %+v, want %q", got, want)
	}
	if sha256.Sum256([]byte(got.Stdout)) != sha256.Sum256(want) {
		t.Error("hashes differ")
	}
}

func TestFingerprintCommand(t *testing.T) {
	body := `{"amountCents":1000,"currency":"EUR","traceId":"a"}`
	retry := `{ "traceId":"b", "currency":"EUR", "amountCents":1000.0 }`
	spec := fingerprint.Spec{Intent: []string{"amountCents", "currency"}, Headers: []string{"X-Account"}}
	f, err := fingerprint.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	req := fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: []byte(body),
		Header: map[string][]string{"X-Account": {"acc_1"}}}
	sum, err := f.Sum(req)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := f.AppendIntent(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"fingerprint", "--intent", "amountCents", "--intent", "currency", "--path", "/v1/payments", "--header", "X-Account: acc_1"}

	t.Run("MatchesLibrary", func(t *testing.T) {
		got := runCLI(args, body)
		if diff := cmp.Diff(result{0, sum.String() + "\n", ""}, got); diff != "" {
			t.Errorf("mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("Show", func(t *testing.T) {
		got := runCLI(append(args, "--show"), body)
		if diff := cmp.Diff(result{0, sum.String() + "\n" + string(doc) + "\n", ""}, got); diff != "" {
			t.Errorf("mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("RetryIsStable", func(t *testing.T) {
		if got := runCLI(args, retry); got.Stdout != sum.String()+"\n" {
			t.Errorf("retry fingerprint %q, want %q", got.Stdout, sum)
		}
	})
	t.Run("HeaderCounts", func(t *testing.T) {
		other := append(args[:len(args)-1:len(args)-1], "x-account:acc_2")
		if got := runCLI(other, body); got.Code != 0 || got.Stdout == sum.String()+"\n" {
			t.Errorf("other account gave %+v, want another fingerprint", got)
		}
	})
	t.Run("JCSMergesBigIntegers", func(t *testing.T) {
		a := runCLI([]string{"fingerprint", "--numbers", "jcs"}, `{"n":9007199254740993}`)
		b := runCLI([]string{"fingerprint", "--numbers", "jcs"}, `{"n":9007199254740992}`)
		c := runCLI([]string{"fingerprint"}, `{"n":9007199254740993}`)
		d := runCLI([]string{"fingerprint"}, `{"n":9007199254740992}`)
		if a.Stdout != b.Stdout || c.Stdout == d.Stdout || a.Code|b.Code|c.Code|d.Code != 0 {
			t.Errorf("jcs: %q %q; exact: %q %q", a.Stdout, b.Stdout, c.Stdout, d.Stdout)
		}
	})
	t.Run("Ignore", func(t *testing.T) {
		a := runCLI([]string{"fingerprint", "--ignore", "traceId"}, body)
		b := runCLI([]string{"fingerprint", "--ignore", "traceId"}, retry)
		if a.Code != 0 || a.Stdout != b.Stdout {
			t.Errorf("ignored traceId changed the fingerprint: %+v %+v", a, b)
		}
	})
	t.Run("MissingRequired", func(t *testing.T) {
		got := runCLI([]string{"fingerprint", "--intent", "amountCents", "--required", "amountCents"}, `{"currency":"EUR"}`)
		want := result{1, "", "idemprint: <stdin>: fingerprint: body \"amountCents\": required value missing\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("InvalidBody", func(t *testing.T) {
		got := runCLI([]string{"fingerprint"}, `{"amount":10,"amount":10000}`)
		want := result{1, "", "idemprint: <stdin>:1:14 (byte 13) at /amount: duplicate member name \"amount\"\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("Policy", func(t *testing.T) {
		const pol = "../../testdata/policy/payments.json"
		a := runCLI([]string{"fingerprint", "--policy", pol, "--route", "POST /v1/payments", "../../testdata/requests/payment-10eur.json"}, "")
		b := runCLI([]string{"fingerprint", "--policy", pol, "--route", "POST /v1/payments", "../../testdata/requests/payment-10eur-retry.json"}, "")
		c := runCLI([]string{"fingerprint", "--policy", pol, "--route", "POST /v1/payments", "../../testdata/requests/payment-10000eur.json"}, "")
		if a.Code != 0 || !strings.HasPrefix(a.Stdout, "v1:sha256:") || a.Stdout != b.Stdout || a.Stdout == c.Stdout {
			t.Errorf("seed scenario: first %+v, retry %+v, other amount %+v", a, b, c)
		}
	})
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"BadPath", []string{"fingerprint", "--intent", "a|b"}},
		{"BadHeader", []string{"fingerprint", "--header", "nocolon"}},
		{"BadQuery", []string{"fingerprint", "--query", "noequals"}},
		{"RouteWithoutPolicy", []string{"fingerprint", "--route", "POST /x"}},
		{"PolicyAndIntent", []string{"fingerprint", "--policy", "p.json", "--route", "POST /x", "--intent", "a"}},
		{"BadRoute", []string{"fingerprint", "--policy", "../../testdata/policy/payments.json", "--route", "/v1/payments"}},
		{"PolicyAndQuery", []string{"fingerprint", "--policy", "../../testdata/policy/payments.json", "--route", "POST /v1/refunds", "--query", "x=1"}},
	} {
		t.Run("Usage/"+tt.name, func(t *testing.T) {
			if got := runCLI(tt.args, "{}"); got.Code != 2 || got.Stdout != "" || got.Stderr == "" {
				t.Errorf("run(%q) = %+v, want status 2 and a message", tt.args, got)
			}
		})
	}
}

func TestTopLevel(t *testing.T) {
	if got := runCLI([]string{"version"}, ""); got.Code != 0 || !strings.HasPrefix(got.Stdout, "idemprint "+version) {
		t.Errorf("version: %+v", got)
	}
	if got := runCLI([]string{"help"}, ""); got.Code != 0 || !strings.Contains(got.Stdout, "canon ") || !strings.Contains(got.Stdout, "explain ") {
		t.Errorf("help: %+v", got)
	}
	if got := runCLI(nil, ""); got.Code != 2 || !strings.Contains(got.Stderr, "usage:") {
		t.Errorf("no command: %+v", got)
	}
	if got := runCLI([]string{"frobnicate"}, ""); got.Code != 2 || !strings.Contains(got.Stderr, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %+v", got)
	}
}
