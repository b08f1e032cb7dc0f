package audit_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/audit"
	"github.com/idemprint/idemprint/policy"
)

var update = flag.Bool("update", false, "rewrite the golden reports in testdata/audit")

const dir = "../testdata/audit"

func loadPolicy(t testing.TB, name string) (*policy.Policy, []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return pol, src
}

// run audits the named logs of testdata/audit under pol.
func run(t testing.TB, pol *policy.Policy, opts audit.Options, names ...string) *audit.Report {
	t.Helper()
	var inputs []audit.Input
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, audit.Input{Name: "testdata/audit/" + name, R: bytes.NewReader(b), Size: int64(len(b))})
	}
	rep, err := audit.Run(context.Background(), pol, inputs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestGolden compares the reports on the shipped logs with the golden
// files, which only "go test ./audit -update" rewrites.
func TestGolden(t *testing.T) {
	pol, _ := loadPolicy(t, "policy.json")
	for _, log := range []string{"payments.jsonl", "session.har"} {
		t.Run(log, func(t *testing.T) {
			rep := run(t, pol, audit.Options{}, log)
			var text, js bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(log, filepath.Ext(log))
			for _, g := range []struct {
				file string
				got  []byte
			}{{base + ".report.txt", text.Bytes()}, {base + ".report.json", js.Bytes()}} {
				path := filepath.Join(dir, g.file)
				if *update {
					if err := os.WriteFile(path, g.got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(string(want), string(g.got)); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", g.file, diff)
				}
			}
			if !rep.Findings() {
				t.Error("Findings() = false, want true: the logs hold rejections and a patch")
			}
		})
	}
}

// TestPatch applies the suggested patch to the policy and audits the log
// again: exactly the false conflicts the patch claims become retries, and
// the real reuse with another amount stays rejected.
func TestPatch(t *testing.T) {
	pol, src := loadPolicy(t, "policy.json")
	for _, log := range []string{"payments.jsonl", "session.har"} {
		t.Run(log, func(t *testing.T) {
			before := run(t, pol, audit.Options{}, log)
			rule := before.Rules[0]
			if rule.Patch == nil {
				t.Fatal("no patch suggested")
			}
			if got, want := rule.Patch.Removes, int64(1); got != want {
				t.Fatalf("patch removes %d mismatches, want %d (the retry with a new trace ID and timestamp)", got, want)
			}
			patched, err := rule.Patch.Apply(src)
			if err != nil {
				t.Fatal(err)
			}
			pol2, err := policy.Parse(patched)
			if err != nil {
				t.Fatalf("policy.Parse(patched policy): %v\n%s", err, patched)
			}
			after := run(t, pol2, audit.Options{}, log)
			r2 := after.Rules[0]
			if got, want := r2.Mismatches, rule.Mismatches-rule.Patch.Removes; got != want {
				t.Errorf("mismatches after the patch = %d, want %d", got, want)
			}
			if got, want := r2.Retries, rule.Retries+rule.Patch.Removes; got != want {
				t.Errorf("retries after the patch = %d, want %d", got, want)
			}
			reuse := audit.Answer{Action: "reject", Reason: "mismatch", Status: 422, Problem: "idempotency-key-reuse", Requests: 1}
			found := false
			for _, a := range r2.Answers {
				found = found || a == reuse
			}
			if !found {
				t.Errorf("after the patch, answers %+v lack the rejected reuse %+v", r2.Answers, reuse)
			}
			if len(r2.Differences) != 1 || r2.Differences[0].Path != "amountCents" {
				t.Errorf("after the patch, differences = %+v, want amountCents only", r2.Differences)
			}
			if r2.Patch != nil {
				t.Errorf("after the patch, another patch is suggested: %+v", r2.Patch)
			}
		})
	}
}

// TestGzipAndSeveralInputs reads a gzipped log and a HAR file as one log.
func TestGzipAndSeveralInputs(t *testing.T) {
	pol, _ := loadPolicy(t, "policy.json")
	raw, err := os.ReadFile(filepath.Join(dir, "payments.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	har, err := os.ReadFile(filepath.Join(dir, "session.har"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Run(context.Background(), pol, []audit.Input{
		{Name: "a.jsonl.gz", R: &gz, Size: -1},
		{Name: "b.har", R: bytes.NewReader(har), Size: int64(len(har))},
	}, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []audit.InputSummary{{Name: "a.jsonl.gz", Format: "jsonl", Requests: 21}, {Name: "b.har", Format: "har", Requests: 9}}
	if diff := cmp.Diff(want, rep.Inputs); diff != "" {
		t.Errorf("inputs mismatch (-want +got):\n%s", diff)
	}
	if got, want := rep.Requests, int64(20+8); got != want {
		t.Errorf("requests decided = %d, want %d", got, want)
	}
}

func TestStrict(t *testing.T) {
	pol, _ := loadPolicy(t, "policy.json")
	for _, tc := range []struct {
		name, log string
		want      error
		line      int64
	}{
		{"Malformed", "{\"time\":\"2025-01-06T09:00:00Z\",\"method\":\"GET\",\"path\":\"/\"}\n{\"time\":1}\n", audit.ErrMalformed, 2},
		{"Late", "{\"time\":\"2025-01-06T09:00:00Z\",\"method\":\"GET\",\"path\":\"/\"}\n{\"time\":\"2025-01-06T09:01:00Z\",\"method\":\"GET\",\"path\":\"/\"}\n{\"time\":\"2025-01-06T08:00:00Z\",\"method\":\"GET\",\"path\":\"/\"}\n", audit.ErrLate, 3},
		{"TooLong", "{\"time\":\"2025-01-06T09:00:00Z\",\"method\":\"GET\",\"path\":\"/" + strings.Repeat("a", 200) + "\"}\n", audit.ErrTooLong, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := audit.Options{Strict: true, ReorderWindow: 1, MaxLine: 100}
			_, err := audit.Run(context.Background(), pol, []audit.Input{{Name: "x", R: strings.NewReader(tc.log), Size: -1}}, opts)
			var ae *audit.Error
			if !errors.Is(err, tc.want) || !errors.As(err, &ae) || ae.Where.Line != tc.line {
				t.Fatalf("Run: %v, want %v at line %d", err, tc.want, tc.line)
			}
			opts.Strict = false
			rep, err := audit.Run(context.Background(), pol, []audit.Input{{Name: "x", R: strings.NewReader(tc.log), Size: -1}}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Malformed+rep.Late != 1 || !rep.Findings() {
				t.Errorf("without Strict: malformed %d, late %d, findings %v; want one and findings", rep.Malformed, rep.Late, rep.Findings())
			}
		})
	}
}

func TestInputErrors(t *testing.T) {
	pol, _ := loadPolicy(t, "policy.json")
	for _, tc := range []struct{ name, in string }{
		{"NotJSON", "time,method,path\n"},
		{"HARWithoutEntries", `{"log": {"version": "1.2"}}`},
		{"HAREntriesNotArray", `{"log": {"entries": {}}}`},
		{"BadGzip", "\x1f\x8b\x00\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := audit.Run(context.Background(), pol, []audit.Input{{Name: "x", R: strings.NewReader(tc.in), Size: -1}}, audit.Options{})
			if !errors.Is(err, audit.ErrFormat) {
				t.Fatalf("Run: %v, want ErrFormat", err)
			}
		})
	}
}
