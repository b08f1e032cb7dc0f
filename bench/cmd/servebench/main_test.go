package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the benchmark's roles, as the
// command does when it starts itself again.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "role" {
		if err := role(os.Args[2], os.Args[3:]); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestQuantile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"Empty", nil, 0.5, 0},
		{"One", ms(7), 0.99, 7 * time.Millisecond},
		{"Median/Odd", ms(1, 2, 3), 0.5, 2 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("quantile(%v, %v) = %v, want %v", tt.sorted, tt.q, got, tt.want)
			}
		})
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	if got := quantile(hundred, 0.99); got != 99 {
		t.Errorf("p99 of 1..100 = %v, want 99", got)
	}
	if got := median([]float64{3, 1, 4, 2}); got != 2.5 {
		t.Errorf("median(3, 1, 4, 2) = %v, want 2.5", got)
	}
}

// The keys look like UUIDs, 36 characters, as Fiber's middleware wants,
// and never repeat.
func TestKey(t *testing.T) {
	var g generator
	g.init(1)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		k := g.key()
		if !uuid.MatchString(k) || seen[k] {
			t.Fatalf("key %q: not a UUID, or repeated", k)
		}
		seen[k] = true
	}
}

// A short run over the memory store and the peers: every target answers,
// and the table comes out.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds idemprint and starts five servers")
	}
	var stdout, stderr strings.Builder
	code := runBench([]string{"-rounds", "1", "-duration", "200ms", "-warmup", "100ms", "-concurrency", "4"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("servebench = %d\n%s", code, stderr.String())
	}
	for _, want := range []string{"| reverse proxy, no idempotency |", "| idemprint serve, memory store |", "| Fiber v3 + idempotency middleware |", "keeps"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "errors)") {
		t.Errorf("requests failed:\n%s", stdout.String())
	}
}

// A round runs each target next to its baseline, and every order turns.
func TestRoundOrder(t *testing.T) {
	ts := []*target{{name: "bare"}, {name: "mem", baseline: "bare"}, {name: "redis", baseline: "bare"}, {name: "fiber"}, {name: "fiber-idem", baseline: "fiber"}}
	names := func(round int) string {
		var out []string
		for _, t := range roundOrder(ts, round) {
			out = append(out, t.name)
		}
		return strings.Join(out, " ")
	}
	for round, want := range []string{
		"bare mem redis fiber fiber-idem",
		"fiber-idem fiber mem redis bare",
		"redis bare mem fiber fiber-idem",
	} {
		if got := names(round); got != want {
			t.Errorf("round %d: %s, want %s", round, got, want)
		}
	}
}
