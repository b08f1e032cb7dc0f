package fuzz

import (
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

// This file derives random Specs from a tree and states, from the package
// documentation of fingerprint, which changes of the body must change the
// fingerprint and which must not.

// step is one step of a concrete path: a member name, or an array index.
type step struct {
	name  string
	index int // -1 for a member
}

type node struct {
	path []step
	v    value
}

// nodes lists every value of v but v itself, depth first.
func nodes(v value) []node {
	var out []node
	var walk func(path []step, v value)
	walk = func(path []step, v value) {
		for i, e := range v.elems {
			p := append(slices.Clip(path), step{index: i})
			out = append(out, node{p, e})
			walk(p, e)
		}
		for _, m := range v.members {
			p := append(slices.Clip(path), step{name: m.name, index: -1})
			out = append(out, node{p, m.val})
			walk(p, m.val)
		}
	}
	walk(nil, v)
	return out
}

// replaceAt returns v with the value at path replaced by nv.
func replaceAt(v value, path []step, nv value) value {
	if len(path) == 0 {
		return nv
	}
	s := path[0]
	if s.index >= 0 {
		v.elems = slices.Clone(v.elems)
		v.elems[s.index] = replaceAt(v.elems[s.index], path[1:], nv)
		return v
	}
	v.members = slices.Clone(v.members)
	i := slices.IndexFunc(v.members, func(m member) bool { return m.name == s.name })
	v.members[i].val = replaceAt(v.members[i].val, path[1:], nv)
	return v
}

// deleteAt returns v without the member at path, whose last step names it.
func deleteAt(v value, path []step) value {
	s := path[0]
	if len(path) == 1 {
		v.members = slices.DeleteFunc(slices.Clone(v.members), func(m member) bool { return m.name == s.name })
		return v
	}
	if s.index >= 0 {
		v.elems = slices.Clone(v.elems)
		v.elems[s.index] = deleteAt(v.elems[s.index], path[1:])
		return v
	}
	v.members = slices.Clone(v.members)
	i := slices.IndexFunc(v.members, func(m member) bool { return m.name == s.name })
	v.members[i].val = deleteAt(v.members[i].val, path[1:])
	return v
}

// seg is one segment of a path of the documented syntax.
type seg struct {
	all   bool   // "#"
	name  string // the unescaped segment
	index int    // a decimal segment's value, or -1
}

// pattern is an Intent or Ignore path and its segments.
type pattern struct {
	text string
	segs []seg
}

// matches reports whether s selects st: "#" every index, a decimal segment
// an index or a member of that name, any other segment a member.
func (s seg) matches(st step) bool {
	switch {
	case s.all:
		return st.index >= 0
	case st.index >= 0:
		return s.index == st.index
	}
	return s.name == st.name
}

// prefixOf reports whether p selects path or one of its ancestors.
func (p pattern) prefixOf(path []step) bool {
	if len(p.segs) > len(path) {
		return false
	}
	for i, s := range p.segs {
		if !s.matches(path[i]) {
			return false
		}
	}
	return true
}

// below reports whether path is a proper ancestor of a value p may select.
func (p pattern) below(path []step) bool {
	if len(path) >= len(p.segs) {
		return false
	}
	for i, st := range path {
		if !p.segs[i].matches(st) {
			return false
		}
	}
	return true
}

// escapeSegment escapes the characters that the path syntax gives a meaning,
// and a name of digits that is not a canonical index ("01"), which the path
// syntax rejects unescaped.
func escapeSegment(name string) string {
	var b strings.Builder
	if n, err := strconv.Atoi(name); name != "" && strings.Trim(name, "0123456789") == "" && (err != nil || strconv.Itoa(n) != name) {
		b.WriteByte('\\')
	}
	for _, c := range name {
		if strings.ContainsRune(`\.*?|#@[{!`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// patternFor builds a path to the node at path, with "#" for some indexes
// (never the last segment). A member named like a number gets a decimal
// segment, which also names array elements, or an escaped one ("\\1"), which
// names only members. A path for Ignore must end in a member, escaped when
// named like a number.
func patternFor(path []step, r *rand.Rand, ignore bool) (pattern, bool) {
	var p pattern
	var texts []string
	for i, st := range path {
		last := i == len(path)-1
		switch {
		case st.index >= 0 && ignore && last:
			return pattern{}, false
		case st.index >= 0 && !last && r.Intn(3) == 0:
			p.segs = append(p.segs, seg{all: true, index: -1})
			texts = append(texts, "#")
		case st.index >= 0:
			p.segs = append(p.segs, seg{name: strconv.Itoa(st.index), index: st.index})
			texts = append(texts, strconv.Itoa(st.index))
		case st.name == "":
			return pattern{}, false // no syntax for an empty name
		default:
			text := escapeSegment(st.name)
			idx := -1
			if n, err := strconv.Atoi(st.name); err == nil && n >= 0 && strconv.Itoa(n) == st.name {
				if ignore && last || r.Intn(2) == 0 {
					text = `\` + text
				} else {
					idx = n
				}
			}
			p.segs = append(p.segs, seg{name: st.name, index: idx})
			texts = append(texts, text)
		}
	}
	p.text = strings.Join(texts, ".")
	return p, true
}

// specModel is what the test knows of a generated Spec.
type specModel struct {
	spec        fingerprint.Spec
	mode        canonical.NumberMode
	intent      []pattern
	ignoreNames []string
	ignorePaths []pattern
	// conflict: Ignore would remove (part of the way to) an Intent path,
	// which Compile must reject.
	conflict bool
}

// randomSpec derives a Spec from the tree: Intent paths to some of its
// values (none: the whole body counts), Ignore names and paths, a declared
// header and query parameter. One Spec in eight may have Ignore entries
// that conflict with Intent paths; the others have none.
func randomSpec(v value, r *rand.Rand) specModel {
	var sm specModel
	allowConflict := r.Intn(8) == 0
	switch r.Intn(3) {
	case 0:
		sm.spec.Numbers, sm.mode = "jcs", canonical.JCS
	case 1:
		sm.spec.Numbers, sm.mode = "exact", canonical.Exact
	default:
		sm.mode = canonical.Exact
	}
	sm.spec.Headers = []string{"X-Account"}
	sm.spec.Query = []string{"v"}
	ns := nodes(v)
	if len(ns) > 0 && r.Intn(4) > 0 {
		for range 1 + r.Intn(3) {
			n := ns[r.Intn(len(ns))]
			if p, ok := patternFor(n.path, r, false); ok && !slices.ContainsFunc(sm.intent, func(q pattern) bool { return q.text == p.text }) {
				sm.intent = append(sm.intent, p)
			}
		}
		if r.Intn(4) == 0 {
			sm.intent = append(sm.intent, pattern{text: "absent\\.path.x", segs: []seg{{name: "absent.path", index: -1}, {name: "x", index: -1}}})
		}
	}
	for _, p := range sm.intent {
		sm.spec.Intent = append(sm.spec.Intent, p.text)
	}
	if len(sm.intent) > 0 && r.Intn(4) == 0 {
		sm.spec.Required = []string{sm.intent[0].text} // only with a body that has it; see below
		if !hasMatch(v, sm.intent[0]) {
			sm.spec.Required = nil
		}
	}

	// Ignore names: member names of the tree that no Intent path goes through.
	onIntent := func(name string) bool {
		for _, p := range sm.intent {
			for _, s := range p.segs {
				if !s.all && s.name == name {
					return true
				}
			}
		}
		return false
	}
	for range r.Intn(3) {
		var name string
		if len(ns) > 0 && r.Intn(3) > 0 {
			st := ns[r.Intn(len(ns))].path
			if last := st[len(st)-1]; last.index < 0 {
				name = last.name
			}
		} else {
			name = "traceId"
		}
		if name == "" || slices.Contains(sm.ignoreNames, name) || onIntent(name) && !allowConflict {
			continue
		}
		sm.conflict = sm.conflict || onIntent(name)
		sm.ignoreNames = append(sm.ignoreNames, name)
		sm.spec.Ignore = append(sm.spec.Ignore, escapeSegment(name))
	}
	// Ignore paths: paths of two or more segments that remove no Intent path.
	for range r.Intn(3) {
		if len(ns) == 0 {
			break
		}
		n := ns[r.Intn(len(ns))]
		if len(n.path) < 2 {
			continue
		}
		q, ok := patternFor(n.path, r, true)
		if !ok || slices.ContainsFunc(sm.ignorePaths, func(o pattern) bool { return o.text == q.text }) {
			continue
		}
		conflict := slices.ContainsFunc(sm.intent, func(p pattern) bool { return removes(q, p) })
		if conflict && !allowConflict {
			continue
		}
		sm.conflict = sm.conflict || conflict
		sm.ignorePaths = append(sm.ignorePaths, q)
		sm.spec.Ignore = append(sm.spec.Ignore, q.text)
	}
	r.Shuffle(len(sm.spec.Ignore), func(i, j int) { sm.spec.Ignore[i], sm.spec.Ignore[j] = sm.spec.Ignore[j], sm.spec.Ignore[i] })
	return sm
}

// removes reports whether the Ignore path q removes (part of the way to) a
// value that the Intent path p may select, which Compile rejects.
func removes(q, p pattern) bool {
	if len(q.segs) > len(p.segs) {
		return false
	}
	for d, qs := range q.segs {
		ps := p.segs[d]
		var overlap bool
		switch {
		case qs.all:
			overlap = ps.all || ps.index >= 0
		case qs.index >= 0:
			overlap = ps.all || ps.name == qs.name
		default:
			overlap = !ps.all && ps.name == qs.name
		}
		if !overlap {
			return false
		}
	}
	return true
}

// hasMatch reports whether p selects a value in v everywhere ("#" in every
// element), as Required demands.
func hasMatch(v value, p pattern) bool {
	var match func(v value, segs []seg) bool
	match = func(v value, segs []seg) bool {
		if len(segs) == 0 {
			return true
		}
		s := segs[0]
		switch {
		case s.all:
			return v.kind == kindArray && !slices.ContainsFunc(v.elems, func(e value) bool { return !match(e, segs[1:]) })
		case v.kind == kindArray:
			return s.index >= 0 && s.index < len(v.elems) && match(v.elems[s.index], segs[1:])
		case v.kind == kindObject:
			i := slices.IndexFunc(v.members, func(m member) bool { return m.name == s.name })
			return i >= 0 && match(v.members[i].val, segs[1:])
		}
		return false
	}
	return match(v, p.segs)
}

// ignored reports whether Ignore removes the value at path.
func (sm *specModel) ignored(path []step) bool {
	for _, st := range path {
		if st.index < 0 && slices.Contains(sm.ignoreNames, st.name) {
			return true
		}
	}
	return slices.ContainsFunc(sm.ignorePaths, func(q pattern) bool { return q.prefixOf(path) })
}

// counts reports whether the value at path is part of the intent: in or
// below a value an Intent path selects (or anywhere without Intent), and
// not ignored.
func (sm *specModel) counts(path []step) bool {
	if sm.ignored(path) {
		return false
	}
	return len(sm.intent) == 0 || slices.ContainsFunc(sm.intent, func(p pattern) bool { return p.prefixOf(path) })
}

// free reports whether changing or removing the value at path must leave
// the fingerprint alone: it is ignored, or no Intent path reaches or goes
// through it.
func (sm *specModel) free(path []step) bool {
	if sm.ignored(path) {
		return true
	}
	if len(sm.intent) == 0 {
		return false
	}
	return !slices.ContainsFunc(sm.intent, func(p pattern) bool { return p.prefixOf(path) || p.below(path) })
}

func isLeaf(v value) bool { return len(v.elems) == 0 && len(v.members) == 0 }

// intentStats counts what checkIntent checked.
type intentStats struct {
	conflicts, wholeBody atomic.Int64 // Specs of each kind; the others have Intent
	counted, free        atomic.Int64 // changes checked to change or keep the fingerprint
}

// request is the request of an intent case.
func request(body []byte) fingerprint.Request {
	return fingerprint.Request{
		Method: "POST",
		Path:   "/v1/accounts/acc_1/transfers",
		Header: http.Header{"X-Account": {"acc_1"}, "X-Trace": {"t1"}, "Content-Type": {"application/json"}},
		Query:  url.Values{"v": {"2"}, "utm": {"mail"}},
		Body:   body,
	}
}

// checkIntent derives a Spec from the tree and checks that re-spellings and
// changes of free values keep the fingerprint and that changes of counted
// values change it. It returns "" or what failed.
//
// The base request's body is raw when it is not nil, else a spelling of v.
// Counts go to stats when it is not nil.
func checkIntent(v value, raw []byte, r *rand.Rand, stats *intentStats) string {
	if stats == nil {
		stats = new(intentStats)
	}
	sm := randomSpec(v, r)
	f, err := fingerprint.Compile(sm.spec)
	if sm.conflict {
		stats.conflicts.Add(1)
	} else if len(sm.intent) == 0 {
		stats.wholeBody.Add(1)
	}
	switch {
	case sm.conflict && err == nil:
		return fmt.Sprintf("Compile(%#v) accepted Ignore entries that remove an Intent path", sm.spec)
	case sm.conflict && !errors.Is(err, fingerprint.ErrInvalidSpec):
		return fmt.Sprintf("Compile(%#v): %v; want ErrInvalidSpec", sm.spec, err)
	case sm.conflict:
		return ""
	case err != nil:
		return fmt.Sprintf("Compile(%#v): %v", sm.spec, err)
	}
	g := newGenerator(r, genConfig{inRange: true}, 20)
	if raw == nil {
		raw = newSpeller(r).spell(v)
	}
	base := request(raw)
	fp0, err := f.Sum(base)
	if err != nil {
		return fmt.Sprintf("spec %#v: Sum(%s): %v", sm.spec, base.Body, err)
	}
	explain := func(what string, req fingerprint.Request) string {
		a, _ := f.AppendIntent(nil, base)
		b, errB := f.AppendIntent(nil, req)
		return fmt.Sprintf("%s\nspec %#v\nbody  %s\nother %s\nintent  %s\nother   %s (err %v)", what, sm.spec, base.Body, req.Body, a, b, errB)
	}
	same := func(what string, req fingerprint.Request) string {
		fp, err := f.Sum(req)
		if err != nil || fp != fp0 {
			return explain(what+": fingerprint changed", req)
		}
		return ""
	}
	differ := func(what string, req fingerprint.Request) string {
		fp, err := f.Sum(req)
		if err != nil || fp == fp0 {
			return explain(what+": fingerprint did not change", req)
		}
		return ""
	}
	withBody := func(nv value) fingerprint.Request { return request(newSpeller(r).spell(nv)) }

	// Retry stability: a re-spelling; undeclared headers and query
	// parameters; declared header names in another case.
	if msg := same("re-spelling", withBody(v)); msg != "" {
		return msg
	}
	req := withBody(v)
	req.Header = http.Header{"x-account": {"acc_1"}, "content-type": {"text/plain"}}
	req.Query = url.Values{"v": {"2"}, "other": {"1"}}
	if msg := same("undeclared headers and query", req); msg != "" {
		return msg
	}

	// Changes of the request line, declared headers and query.
	req = withBody(v)
	req.Method = "PUT"
	if msg := differ("method", req); msg != "" {
		return msg
	}
	req = withBody(v)
	req.Header = http.Header{"X-Account": {"acc_2"}}
	if msg := differ("declared header", req); msg != "" {
		return msg
	}
	req = withBody(v)
	req.Query = url.Values{"v": {"2", "3"}}
	if msg := differ("declared query", req); msg != "" {
		return msg
	}

	// Changes of counted values (a leaf replaced by an unequal scalar, or a
	// member removed) and of free ones (replaced by anything, or removed).
	ns := nodes(v)
	r.Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
	changed, kept := 0, 0
	for _, n := range ns {
		member := n.path[len(n.path)-1].index < 0
		switch {
		case changed < 3 && isLeaf(n.v) && sm.counts(n.path):
			nv := g.scalar()
			for treeEqual(nv, n.v, sm.mode) {
				nv = g.scalar()
			}
			mutated := replaceAt(v, n.path, nv)
			if member && r.Intn(3) == 0 {
				mutated = deleteAt(v, n.path)
			}
			if sm.spec.Required != nil && !hasMatch(mutated, sm.intent[0]) {
				continue
			}
			changed++
			stats.counted.Add(1)
			if msg := differ(fmt.Sprintf("counted value at %v changed", n.path), withBody(mutated)); msg != "" {
				return msg
			}
		case kept < 3 && sm.free(n.path):
			mutated := replaceAt(v, n.path, g.value(1))
			if member && r.Intn(3) == 0 {
				mutated = deleteAt(v, n.path)
			}
			kept++
			stats.free.Add(1)
			if msg := same(fmt.Sprintf("free value at %v changed", n.path), withBody(mutated)); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// TestCompileRejectsEscapedIndexOverlap: an Ignore path with a decimal
// segment ("0": an index, or a member named "0") removes what an Intent path
// with the escaped segment ("\0": only the member "0") selects, so Compile
// must reject the pair, as it does the other way round. TestIntent found
// Compile accepting it.
func TestCompileRejectsEscapedIndexOverlap(t *testing.T) {
	tests := []struct {
		name   string
		spec   fingerprint.Spec
		reject bool
	}{
		{"EscapedIntent/DecimalIgnore", fingerprint.Spec{Intent: []string{`a.\0.b`}, Ignore: []string{`a.0.b`}}, true},
		{"DecimalIntent/EscapedIgnore", fingerprint.Spec{Intent: []string{`a.0.b`}, Ignore: []string{`a.\0.b`}}, true},
		{"IgnoreInsideIntent", fingerprint.Spec{Intent: []string{`a.\0`}, Ignore: []string{`a.0.b`}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fingerprint.Compile(tt.spec)
			if got := errors.Is(err, fingerprint.ErrInvalidSpec); got != tt.reject {
				t.Errorf("Compile(%#v) = %v; want rejection: %v", tt.spec, err, tt.reject)
			}
		})
	}
}
