package policy

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// oracleOverlaps is the overlap check the obvious way, rule against rule:
// for each rule, the first earlier rule that makes it unreachable, or the
// earlier rules it overlaps, in order. It is cubic in the number of rules,
// which is why Parse no longer works like this, but it reads as the
// package documentation says.
func oracleOverlaps(rules []*Rule) (unreachable []int, overlaps [][]int) {
	unreachable = make([]int, len(rules))
	overlaps = make([][]int, len(rules))
	for ri, r := range rules {
		unreachable[ri] = -1
		for ei, e := range rules[:ri] {
			if e.method == r.method && r.pattern.within(e.pattern) {
				unreachable[ri] = ei
				break
			}
		}
		if unreachable[ri] >= 0 {
			continue
		}
		for ei, e := range rules[:ri] {
			if e.method != r.method || !e.pattern.overlaps(r.pattern) || e.pattern.within(r.pattern) {
				continue
			}
			shared := e.pattern.intersect(r.pattern)
			taken := false
			for _, d := range rules[:ei] {
				if d.method == r.method && shared.within(d.pattern) {
					taken = true
					break
				}
			}
			if !taken {
				overlaps[ri] = append(overlaps[ri], ei)
			}
		}
	}
	return unreachable, overlaps
}

// randomRules returns n rules of few methods, lengths and literals, so
// that they share paths often.
func randomRules(r *rand.Rand, n int) []*Rule {
	segs := []string{"a", "b", "c", "{p}"}
	rules := make([]*Rule, n)
	for i := range rules {
		parts := make([]string, 1+r.IntN(3))
		for j := range parts {
			parts[j] = segs[r.IntN(len(segs))]
			if parts[j] == "{p}" {
				parts[j] = fmt.Sprintf("{p%d}", j) // parameter names are unique in a route
			}
		}
		method := []string{"POST", "PUT"}[r.IntN(2)]
		_, pat, err := parseRoute(method + " /" + strings.Join(parts, "/"))
		if err != nil {
			panic(err)
		}
		rules[i] = &Rule{pointer: fmt.Sprintf("/rules/%d", i), method: method, pattern: pat}
	}
	return rules
}

// TestOverlapMatchesOracle checks the indexed overlap check against
// oracleOverlaps on random rule lists: the same rules unreachable (by the
// same first rule), the same rules overlapping (naming the first).
func TestOverlapMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 3000; n++ {
		rules := randomRules(r, 1+r.IntN(14))
		unreachable, overlaps := oracleOverlaps(rules)
		x := newRouteIndex()
		for i, rule := range rules {
			var routes []string
			for _, e := range rules {
				routes = append(routes, e.method+" "+e.pattern.String())
			}
			got := x.firstCover(rule.method, rule.pattern, i)
			if got != unreachable[i] {
				t.Fatalf("%q: rule %d unreachable by %d, oracle %d", routes, i, got, unreachable[i])
			}
			if got < 0 {
				want := -1
				if len(overlaps[i]) > 0 {
					want = overlaps[i][0]
				}
				if got := x.firstOverlap(rule); got != want {
					t.Fatalf("%q: rule %d overlaps %d first, oracle %v", routes, i, got, overlaps[i])
				}
			}
			x.add(rule)
		}
	}
}

// hostileShapes returns policies of n rules of the shapes that made Parse
// slow: each of n/2 rules "POST /x<j>/{a}" with each of n/2 rules
// "POST /{a}/y<k>" (every pair overlaps), and exceptions followed by their
// general cases, each general rule sharing paths with many earlier ones
// that a yet earlier rule takes.
func hostileShapes(n int) map[string]string {
	var crossing, taken, disjoint strings.Builder
	for j := 0; j < n/2; j++ {
		fmt.Fprintf(&crossing, `{"route":"POST /x%d/{a}"},`+"\n", j)
		fmt.Fprintf(&disjoint, `{"route":"POST /x%d/z%d"},`+"\n", j, j)
	}
	for k := 0; k < n/2; k++ {
		fmt.Fprintf(&crossing, `{"route":"POST /{a}/y%d"},`+"\n", k)
		fmt.Fprintf(&disjoint, `{"route":"POST /{a}/y%d"},`+"\n", k)
	}
	for j := 0; j < n/2; j++ {
		fmt.Fprintf(&taken, `{"route":"POST /x%d/y/{c}"},{"route":"POST /x%d/{b}/{c}"},`+"\n", j, j)
	}
	doc := func(b *strings.Builder, last string) string {
		return `{"rules":[` + b.String() + last + `]}`
	}
	return map[string]string{
		"Crossing": doc(&crossing, `{"route":"POST /{a}/{b}"}`),
		"Disjoint": doc(&disjoint, `{"route":"POST /{a}/{b}"}`),
		"Taken":    doc(&taken, `{"route":"POST /{a}/y/{c}"}`),
	}
}

// TestOverlapWork counts the steps of the overlap check (segments compared,
// trie nodes visited) rather than timing it: on every hostile shape, a
// small number per rule, however many rules there are.
func TestOverlapWork(t *testing.T) {
	for _, n := range []int{1000, 2000, 8000} {
		for name, src := range hostileShapes(n) {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				p := &parser{routes: newRouteIndex()}
				root, err := decodeTree([]byte(src))
				if err != nil {
					t.Fatal(err)
				}
				p.policy(root)
				if limit := 16 * len(p.routes.rules); p.routes.steps > limit {
					t.Errorf("%d steps for %d rules, want at most %d", p.routes.steps, len(p.routes.rules), limit)
				}
				if errors.Is(&ParseError{Findings: p.problems}, ErrTooComplex) {
					t.Errorf("reported too complex")
				}
			})
		}
	}
}

// TestOverlapTooComplex checks the bound on the overlap check's work: a
// policy whose every rule shares a literal segment with many earlier
// rules, but no path, costs the square of its rules; past the bound it is
// rejected at the rule where the bound was reached, once.
func TestOverlapTooComplex(t *testing.T) {
	var b strings.Builder
	n := 9000
	for j := 0; j < n/3; j++ {
		fmt.Fprintf(&b, `{"route":"POST /x%d/y/d%d/{p}"},{"route":"POST /x%d/e%d/c/{p}"},`, j, j, j, j)
	}
	for k := 0; k < n/3; k++ {
		fmt.Fprintf(&b, `{"route":"POST /{a}/y/c/k%d"},`, k)
	}
	src := `{"rules":[` + strings.TrimSuffix(b.String(), ",") + `]}`
	_, err := Parse([]byte(src))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Total != 1 || !errors.Is(err, ErrTooComplex) {
		t.Fatalf("Parse = %v, want one problem, ErrTooComplex", err)
	}
}

// wideIntentRule returns a policy of one rule with n intent paths.
func wideIntentRule(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"f%d",`, i)
	}
	return `{"rules":[{"route":"POST /a","fingerprint":{"intent":[` + strings.TrimSuffix(b.String(), ",") + `]}}]}`
}

// BenchmarkParse parses the hostile shapes at 1,000 and 8,000 rules and a
// rule of 10,000 and 90,000 intent paths: the time per byte stays flat.
func BenchmarkParse(b *testing.B) {
	cases := map[string]string{}
	for _, n := range []int{1000, 8000} {
		for name, src := range hostileShapes(n) {
			cases[fmt.Sprintf("%s/rules=%d", name, n)] = src
		}
	}
	for _, n := range []int{10_000, 90_000} {
		cases[fmt.Sprintf("WideIntent/paths=%d", n)] = wideIntentRule(n)
	}
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		src := []byte(cases[name])
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(src)
			}
		})
	}
}
