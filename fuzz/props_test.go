package fuzz

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/prop"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

var (
	propsScale = flag.Int("props.scale", 1, "multiply the number of cases of every property (long runs)")
	propsSeed  = flag.Int64("props.seed", 0, "seed of the property runs; 0 picks one from the clock")
)

// minCases is the number of successful cases of each property at scale 1.
const minCases = 10_000

// modes are both number modes, for properties that hold in each.
var modes = []canonical.NumberMode{canonical.JCS, canonical.Exact}

// check runs one property with minCases × -props.scale cases of gen.
func check(t *testing.T, name string, gen gopter.Gen, condition func(sample) string) {
	t.Helper()
	t.Parallel()
	seed := *propsSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = minCases * *propsScale
	params.MaxShrinkCount = 200
	props := gopter.NewProperties(params)
	props.Property(name, prop.ForAll(condition, gen))
	start := time.Now()
	props.TestingRun(t, gopter.ConsoleReporter(false))
	t.Logf("%d cases in %v (seed %d; rerun with -props.seed=%d)", params.MinSuccessfulTests, time.Since(start).Round(time.Millisecond), seed, seed)
}

// canon is the canonical form of x in one mode.
func canon(mode canonical.NumberMode, x []byte) ([]byte, error) {
	return canonical.Options{Numbers: mode}.Transform(x)
}

// expectModel compares canonical's verdict on a spelling of v with the
// model's: the same bytes, or the same sentinel.
func expectModel(mode canonical.NumberMode, v value, x, out []byte, err error) string {
	want, werr := canonModel(nil, v, mode)
	switch {
	case werr != nil && !errors.Is(err, werr):
		return fmt.Sprintf("%v: Transform(%s) = %s, %v; want an error wrapping %v", mode, x, out, err, werr)
	case werr == nil && err != nil:
		return fmt.Sprintf("%v: Transform(%s): %v; want %s", mode, x, err, want)
	case werr == nil && !bytes.Equal(out, want):
		return fmt.Sprintf("%v: Transform(%s)\n got %s\nwant %s", mode, x, out, want)
	}
	return ""
}

// sameSentinel reports whether both errors are nil or both wrap the same
// sentinel of canonical or fingerprint (their offsets differ with spelling).
func sameSentinel(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	for _, s := range []error{canonical.ErrSyntax, canonical.ErrDuplicateName, canonical.ErrInvalidUTF8,
		canonical.ErrInvalidSurrogate, canonical.ErrNumberRange, canonical.ErrTooDeep, canonical.ErrTooLarge,
		canonical.ErrNoncharacter, fingerprint.ErrMissingRequired, fingerprint.ErrInvalidRequest} {
		if errors.Is(a, s) {
			return errors.Is(b, s)
		}
	}
	return false
}

// TestIdempotence: canon(canon(x)) = canon(x) in both number modes, for
// every spelling x of every generated value.
func TestIdempotence(t *testing.T) {
	check(t, "canon(canon(x)) = canon(x)", genSample(genConfig{}), func(s sample) string {
		x := newSpeller(s.rng()).spell(s.v)
		for _, mode := range modes {
			out, err := canon(mode, x)
			if err != nil {
				continue // TestRetryStability holds errors to the model
			}
			again, err := canon(mode, out)
			if err != nil || !bytes.Equal(again, out) {
				return fmt.Sprintf("%v: Transform(%s) = %s; again: %s, %v", mode, x, out, again, err)
			}
		}
		return ""
	})
}

// TestRetryStability: canon(r(x)) = canon(x) for two independent spellings,
// and both equal the model's canonical form of the value (or both fail as
// the model says); Sum(r(x)) = Sum(x) for the whole body in both modes and
// for a Spec with Intent and Ignore derived from the value.
func TestRetryStability(t *testing.T) {
	check(t, "canon(r(x)) = canon(x) and Sum(r(x)) = Sum(x)", genSample(genConfig{}), func(s sample) string {
		r := s.rng()
		x := newSpeller(r).spell(s.v)
		y := newSpeller(r).spell(s.v)
		for _, mode := range modes {
			cx, errX := canon(mode, x)
			cy, errY := canon(mode, y)
			if msg := expectModel(mode, s.v, x, cx, errX); msg != "" {
				return msg
			}
			if msg := expectModel(mode, s.v, y, cy, errY); msg != "" {
				return msg
			}
			fx, errX := wholeBody[mode].Sum(request(x))
			fy, errY := wholeBody[mode].Sum(request(y))
			if fx != fy || !sameSentinel(errX, errY) {
				return fmt.Sprintf("%v: Sum differs for\n%s\n%s\n(%v, %v)", mode, x, y, errX, errY)
			}
		}
		sm := randomSpec(s.v, r)
		f, err := fingerprint.Compile(sm.spec)
		if err != nil {
			return "" // TestIntent holds Compile to the model
		}
		fx, errX := f.Sum(request(x))
		fy, errY := f.Sum(request(y))
		if fx != fy || !sameSentinel(errX, errY) {
			return fmt.Sprintf("spec %#v: Sum differs for\n%s\n%s\n(%v, %v)", sm.spec, x, y, errX, errY)
		}
		return ""
	})
}

// TestCanonicalEqualityIsSemanticEquality: for pairs of texts that are
// sometimes spellings of one value and sometimes of near misses (a digit
// beyond a double's precision, a look-alike character, a renamed or dropped
// member, a type change), the canonical forms are equal exactly when
// encoding/json decodes the texts to equal values: exact decimal values in
// Exact mode, doubles in JCS mode.
func TestCanonicalEqualityIsSemanticEquality(t *testing.T) {
	var equal, unequal [2]atomic.Int64
	check(t, "canon(a) = canon(b) iff a and b decode to equal values", genSample(genConfig{}), func(s sample) string {
		r := s.rng()
		a, b := s.v, s.v
		if r.Intn(3) > 0 {
			b = mutate(s.v, r)
		}
		ta, tb := newSpeller(r).spell(a), newSpeller(r).spell(b)
		for _, mode := range modes {
			ca, errA := canon(mode, ta)
			cb, errB := canon(mode, tb)
			if errA != nil || errB != nil {
				continue // out of range in this mode; TestRetryStability holds errors to the model
			}
			sem := sameValue(ta, tb, mode)
			if got := bytes.Equal(ca, cb); got != sem {
				return fmt.Sprintf("%v: canonical forms equal: %v, values equal: %v\na %s\nb %s\ncanon(a) %s\ncanon(b) %s\n%s", mode, got, sem, ta, tb, ca, cb, valueDiff(ta, tb, mode))
			}
			if sem {
				equal[mode].Add(1)
			} else {
				unequal[mode].Add(1)
			}
		}
		return ""
	})
	for _, mode := range modes {
		e, u := equal[mode].Load(), unequal[mode].Load()
		t.Logf("%v: %d equal pairs, %d unequal pairs", mode, e, u)
		if e < (e+u)/5 || u < (e+u)/5 {
			t.Errorf("%v: %d equal and %d unequal pairs: the pair generator is lopsided", mode, e, u)
		}
	}
}

// TestIntent: changing any value that counts changes the fingerprint, and
// re-spelling the body or changing an ignored or undeclared value does not.
func TestIntent(t *testing.T) {
	var stats intentStats
	check(t, "fingerprints change exactly with the intent", genSample(genConfig{objectRoot: true, inRange: true}), func(s sample) string {
		return checkIntent(s.v, nil, s.rng(), &stats)
	})
	t.Logf("Specs: %d conflicting (Compile must reject), %d whole-body; changes: %d counted, %d free",
		stats.conflicts.Load(), stats.wholeBody.Load(), stats.counted.Load(), stats.free.Load())
}

// TestOutputValidity: every canonical output is valid UTF-8 and valid JSON
// that encoding/json decodes to the input's value (exact decimals in Exact
// mode, doubles in JCS mode), and it is at most growthPerNumber bytes per
// number longer than the input.
func TestOutputValidity(t *testing.T) {
	check(t, "canon(x) is valid, means x and is not much longer", genSample(genConfig{}), func(s sample) string {
		x := newSpeller(s.rng()).spell(s.v)
		for _, mode := range modes {
			out, err := canon(mode, x)
			if err != nil {
				continue
			}
			if !utf8.Valid(out) || !json.Valid(out) {
				return fmt.Sprintf("%v: Transform(%s) = %q is not valid", mode, x, out)
			}
			if !sameValue(x, out, mode) {
				return fmt.Sprintf("%v: Transform(%s) = %s means another value:\n%s", mode, x, out, valueDiff(x, out, mode))
			}
			if limit := len(x) + growthPerNumber*countNumbers(s.v); len(out) > limit {
				return fmt.Sprintf("%v: Transform(%s) = %s is %d bytes, over %d", mode, x, out, len(out), limit)
			}
		}
		return ""
	})
}

// mutate returns v with one value changed in a way that often, but not
// always, changes what v means.
func mutate(v value, r *rand.Rand) value {
	ns := nodes(v)
	if len(ns) == 0 || r.Intn(8) == 0 {
		return nearMiss(v, r)
	}
	n := ns[r.Intn(len(ns))]
	return replaceAt(v, n.path, nearMiss(n.v, r))
}

// lookAlikes are pairs of characters that differ but look or sort alike.
var lookAlikes = [][2]string{
	{"\u00e9", "e\u0301"}, {"\ue000", "\U0001f600"}, {"a", "A"}, {"/", "\\"}, {"\u2028", "\n"},
	{"\ufeff", ""}, {"\u0000", ""}, {"\U0010ffff", "\uffff"}, {"1", "\uff11"},
}

func nearMiss(v value, r *rand.Rand) value {
	switch v.kind {
	case kindNull:
		return []value{{kind: kindBool}, {kind: kindNumber}, {kind: kindString}, {kind: kindArray}, {kind: kindObject}}[r.Intn(5)]
	case kindBool:
		if r.Intn(2) == 0 {
			return value{kind: kindString, s: fmt.Sprint(v.b)}
		}
		return value{kind: kindBool, b: !v.b}
	case kindNumber:
		d := v.num
		switch r.Intn(6) {
		case 0: // a digit far beyond a double's precision
			if !d.isZero() {
				d.digits += "00000000000000000001"
			}
		case 1: // the last digit off by one
			if !d.isZero() {
				last := d.digits[len(d.digits)-1]
				if last == '9' {
					last = '8'
				} else {
					last++
				}
				d.digits = d.digits[:len(d.digits)-1] + string(last)
			}
		case 2:
			d.point++
		case 3:
			d.neg = !d.neg
		case 4:
			return value{kind: kindString, s: string(appendLayout(nil, d))}
		default:
			return value{kind: kindNumber, num: mustDecimal(numberTable[r.Intn(len(numberTable))])}
		}
		return value{kind: kindNumber, num: d}
	case kindString:
		s := v.s
		for _, p := range lookAlikes {
			if i := r.Intn(2); strings.Contains(s, p[i]) && p[i] != "" {
				return value{kind: kindString, s: strings.Replace(s, p[i], p[1-i], 1)}
			}
		}
		switch r.Intn(3) {
		case 0:
			s += lookAlikes[r.Intn(len(lookAlikes))][0]
		case 1:
			if rs := []rune(s); len(rs) > 0 {
				s = string(rs[:len(rs)-1])
			}
		default:
			s = strings.ToUpper(s)
		}
		return value{kind: kindString, s: s}
	case kindArray:
		elems := append([]value(nil), v.elems...)
		switch {
		case len(elems) > 1 && r.Intn(2) == 0:
			i, j := r.Intn(len(elems)), r.Intn(len(elems))
			elems[i], elems[j] = elems[j], elems[i]
		case len(elems) > 0 && r.Intn(2) == 0:
			elems = elems[:len(elems)-1]
		default:
			elems = append(elems, value{kind: kindNull})
		}
		return value{kind: kindArray, elems: elems}
	}
	ms := append([]member(nil), v.members...)
	switch {
	case len(ms) > 0 && r.Intn(2) == 0:
		i := r.Intn(len(ms))
		name := ms[i].name
		for _, p := range lookAlikes {
			if strings.Contains(name, p[0]) {
				name = strings.Replace(name, p[0], p[1], 1)
				break
			}
		}
		if name == ms[i].name {
			name += "\U0001f600"
		}
		if slices.ContainsFunc(ms, func(m member) bool { return m.name == name }) {
			return value{kind: kindObject, members: slices.Delete(ms, i, i+1)} // renaming would collide: drop instead
		}
		ms[i].name = name
	case len(ms) > 0:
		i := r.Intn(len(ms))
		ms = slices.Delete(ms, i, i+1)
	default:
		return value{kind: kindArray}
	}
	return value{kind: kindObject, members: ms}
}
