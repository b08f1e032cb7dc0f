package policy

import (
	"iter"
	"slices"
)

// The overlap check of Parse. Under first-match order a rule r is
// unreachable when one earlier rule matches every path it matches, and
// overlaps an earlier rule e when some path of r goes to e although e is
// not more specific than r (e does not lie within r). Paths that both e and
// r match form one pattern, e ∩ r, and they go to e unless one rule before
// e covers e ∩ r: a set of patterns covers a pattern only if one of them
// does (a path with, at every parameter, a literal that no rule names is
// matched only by patterns with a parameter there). So the check needs no
// enumeration of paths, only two questions about earlier rules: which is
// the first to cover a pattern, and which share paths with r.
//
// Asked of every earlier rule, they cost the square of the number of rules
// (the cube, with the question of which rule takes e ∩ r), and a policy of
// 2,000 rules took seconds. The index below answers them near the rules
// concerned: covering rules by a walk of a trie of patterns, in which a
// pattern's literal segment follows at most two edges (the literal, a
// parameter) and its parameter one; the rules sharing paths with r from
// the rules with r's literal, or a parameter, at r's most selective
// literal segment, in order, stopping at the first overlap. Every rule is
// reported once, naming the first rule it overlaps.
//
// These are partial-match questions, for which no method is known that
// answers them in near-linear time for every set of patterns, so the work
// is bounded: a policy that would exceed maxOverlapSteps (no policy written
// by hand comes near) is rejected with ErrTooComplex at the rule where the
// bound was reached. Compare asks the same questions of two policies.

// maxOverlapSteps bounds the work of the overlap check of one policy,
// counted in segments compared and trie nodes visited: well under a second.
const maxOverlapSteps = 1 << 25

// routeIndex indexes the rules of a policy, in document order, for the
// overlap check. A rule is known by its number: its position in rules.
type routeIndex struct {
	rules  []*Rule
	tries  map[string]*trieNode // per method
	lits   map[litKey][]int     // ascending rule numbers
	vars   map[segKey][]int     // ascending rule numbers
	shapes map[segKey][]int     // at pos 0: every rule of the method and length
	steps  int
}

// segKey is a segment position in the patterns of a method with n
// segments; litKey a literal there.
type segKey struct {
	method string
	n, pos int
}

type litKey struct {
	segKey
	text string
}

// trieNode is a prefix of the patterns of a method.
type trieNode struct {
	lits  map[string]*trieNode
	param *trieNode
	first int // the first rule through this node
	end   int // the first rule whose pattern ends here, or -1
}

func newRouteIndex() *routeIndex {
	return &routeIndex{tries: map[string]*trieNode{}, lits: map[litKey][]int{}, vars: map[segKey][]int{}, shapes: map[segKey][]int{}}
}

// exhausted reports whether the check has used up its bound.
func (x *routeIndex) exhausted() bool { return x.steps > maxOverlapSteps }

// add appends r to the index, as the next rule.
func (x *routeIndex) add(r *Rule) {
	num := len(x.rules)
	x.rules = append(x.rules, r)
	shape := segKey{r.method, len(r.pattern), 0}
	x.shapes[shape] = append(x.shapes[shape], num)
	n := x.tries[r.method]
	if n == nil {
		n = &trieNode{first: num, end: -1}
		x.tries[r.method] = n
	}
	for pos, s := range r.pattern {
		k := segKey{r.method, len(r.pattern), pos}
		var child *trieNode
		if s.param {
			x.vars[k] = append(x.vars[k], num)
			if n.param == nil {
				n.param = &trieNode{first: num, end: -1}
			}
			child = n.param
		} else {
			x.lits[litKey{k, s.text}] = append(x.lits[litKey{k, s.text}], num)
			if n.lits == nil {
				n.lits = map[string]*trieNode{}
			}
			if child = n.lits[s.text]; child == nil {
				child = &trieNode{first: num, end: -1}
				n.lits[s.text] = child
			}
		}
		n = child
	}
	if n.end < 0 {
		n.end = num
	}
}

// firstCover returns the first rule numbered below limit, of the method,
// that matches every path q matches, or -1.
func (x *routeIndex) firstCover(method string, q pattern, limit int) int {
	best := limit
	x.cover(x.tries[method], q, &best)
	if best == limit {
		return -1
	}
	return best
}

func (x *routeIndex) cover(n *trieNode, q pattern, best *int) {
	if n == nil || n.first >= *best {
		return
	}
	x.steps++
	if len(q) == 0 {
		if n.end >= 0 && n.end < *best {
			*best = n.end
		}
		return
	}
	// A parameter covers whatever q has here; a literal only itself.
	x.cover(n.param, q[1:], best)
	if !q[0].param {
		x.cover(n.lits[q[0].text], q[1:], best)
	}
}

// firstOverlap returns the first indexed rule that some path of r reaches
// under first-match order although it does not lie within r, or -1. The
// rules indexed are those before r.
func (x *routeIndex) firstOverlap(r *Rule) int {
	if !slices.ContainsFunc(r.pattern, func(s segment) bool { return !s.param }) {
		return -1 // every rule sharing paths with r lies within it
	}
	for e := range x.sharing(r.method, r.pattern) {
		ep := x.rules[e].pattern
		if !ep.within(r.pattern) && x.firstCover(r.method, ep.intersect(r.pattern), e) < 0 {
			return e
		}
	}
	return -1
}

// sharing yields, in order, the indexed rules of the method that share
// paths with p, until the work is exhausted. They have, at each literal
// segment of p, the same literal or a parameter: it looks among those of
// the segment where they are fewest, or without a literal segment among
// all rules of p's number of segments.
func (x *routeIndex) sharing(method string, p pattern) iter.Seq[int] {
	lits, vars := x.shapes[segKey{method, len(p), 0}], []int(nil)
	best := -1
	for pos, s := range p {
		if s.param {
			continue
		}
		k := segKey{method, len(p), pos}
		l, v := x.lits[litKey{k, s.text}], x.vars[k]
		if best < 0 || len(l)+len(v) < len(lits)+len(vars) {
			lits, vars, best = l, v, pos
		}
	}
	return func(yield func(int) bool) {
		for i, j := 0, 0; (i < len(lits) || j < len(vars)) && !x.exhausted(); {
			var e int
			if j == len(vars) || i < len(lits) && lits[i] < vars[j] {
				e, i = lits[i], i+1
			} else {
				e, j = vars[j], j+1
			}
			x.steps += len(p)
			if x.rules[e].pattern.overlaps(p) && !yield(e) {
				return
			}
		}
	}
}
