package canonical_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/canonical"
)

// wideName draws a member name for TestWideObjectsMatchModel: names that
// share 8, 16 or more leading bytes, that are prefixes of one another, that
// hold NUL, U+E000 to U+FFFF or astral characters, and their escaped
// spellings.
func wideName(r *rand.Rand) string {
	stems := []string{"", "a", "metric.cpu.", "metric.cpu.latency.p99.", "abcdefgh", "abcdefghabcdefgh", "\u00e9t\u00e9", "\ue000", "\U0001f600", "\uffff"}
	tails := []string{"", "\x00", "0", "1", "10", "\ue000", "\U0001f600", "\u00e9", "z", "zz"}
	s := stems[r.IntN(len(stems))]
	for range r.IntN(3) {
		s += tails[r.IntN(len(tails))]
	}
	return s + strconv.Itoa(r.IntN(40))
}

// spellName writes s as a JSON string token, escaping characters at random.
func spellName(r *rand.Rand, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c < 0x20 || c == '"' || c == '\\' || r.IntN(5) == 0:
			for _, u := range utf16.Encode([]rune{c}) {
				b.WriteString(`\u` + strconv.FormatInt(int64(u)|0x10000, 16)[1:])
			}
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func utf16Less(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// TestWideObjectsMatchModel checks the sorting of objects of 13 to 9500
// members by name keys, ties and duplicates included, against a model
// that sorts the decoded names by UTF-16 code units.
func TestWideObjectsMatchModel(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for n := range 400 {
		size := 13 + r.IntN(40)
		if n%20 == 0 {
			size = 500 + r.IntN(9000) // from 4096 on, sorted by radix
		}
		type mem struct {
			name string
			tok  string
			val  int
			off  int
		}
		var ms []mem
		seen := map[string]bool{}
		var in strings.Builder
		in.WriteByte('{')
		firstDup := -1
		for i := range size {
			nm := wideName(r)
			if seen[nm] && n%3 != 0 {
				continue // two in three objects hold no duplicate
			}
			if len(ms) > 0 {
				in.WriteByte(',')
			}
			if seen[nm] && firstDup < 0 {
				firstDup = in.Len()
			}
			seen[nm] = true
			m := mem{name: nm, tok: spellName(r, nm), val: i, off: in.Len()}
			in.WriteString(m.tok + ":" + strconv.Itoa(i))
			ms = append(ms, m)
		}
		in.WriteByte('}')
		got, err := canonical.Transform([]byte(in.String()))
		if firstDup >= 0 {
			var ce *canonical.Error
			if !errors.As(err, &ce) || !errors.Is(err, canonical.ErrDuplicateName) || ce.Offset != int64(firstDup) {
				t.Fatalf("object %d (%d members): Transform = %v; want ErrDuplicateName at byte %d", n, len(ms), err, firstDup)
			}
			continue
		}
		if err != nil {
			t.Fatalf("object %d: %v", n, err)
		}
		slices.SortStableFunc(ms, func(a, b mem) int { return utf16Less(a.name, b.name) })
		var want []byte
		want = append(want, '{')
		for i, m := range ms {
			if i > 0 {
				want = append(want, ',')
			}
			want, _ = canonical.AppendString(want, m.name)
			want = append(want, ':')
			want = strconv.AppendInt(want, int64(m.val), 10)
		}
		want = append(want, '}')
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("object %d (%d members) mismatch (-want +got):\n%s", n, len(ms), diff)
		}
		var v map[string]int
		if err := json.Unmarshal(got, &v); err != nil || len(v) != len(ms) {
			t.Fatalf("object %d: output does not decode to %d members: %v", n, len(ms), err)
		}
	}
}

// TestWideObjectDuplicates checks which member a wide object's duplicate
// error names: the first, in input order, that repeats an earlier name.
func TestWideObjectDuplicates(t *testing.T) {
	filler := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			b.WriteString(`"m` + strconv.Itoa(i) + `":0,`)
		}
		return b.String()
	}
	tests := []struct {
		name, in, ptr string
		reason        string
	}{
		{
			name:   "ThreeTimes",
			in:     `{` + filler(0, 20) + `"same.long.name.x":1,` + filler(20, 30) + `"same.long.name.x":2,"same.long.name.x":3}`,
			ptr:    "/same.long.name.x",
			reason: "the second of three equal names is the first repetition",
		},
		{
			name:   "AfterUnescape",
			in:     `{` + filler(0, 20) + `"\u0061bcdefghij":1,` + filler(20, 30) + `"abcdefghij":2}`,
			ptr:    "/abcdefghij",
			reason: "an escaped name ties with its plain spelling",
		},
		{
			name:   "SamePrefixDiffersLate",
			in:     `{` + filler(0, 20) + `"abcdefghabcdefghX":1,"abcdefghabcdefghY":2,"abcdefghabcdefghX":3}`,
			ptr:    "/abcdefghabcdefghX",
			reason: "names equal in their first 16 bytes are told apart by the third key",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := int64(strings.LastIndex(tt.in, `"`+strings.TrimPrefix(tt.ptr, "/")+`"`))
			if tt.name == "ThreeTimes" {
				want = int64(strings.Index(tt.in, `"same.long.name.x":2`))
			}
			_, err := canonical.Transform([]byte(tt.in))
			var ce *canonical.Error
			if !errors.As(err, &ce) || !errors.Is(err, canonical.ErrDuplicateName) || ce.Offset != want || ce.Pointer != tt.ptr {
				t.Errorf("Transform = %v; want ErrDuplicateName at byte %d, %s (%s)", err, want, tt.ptr, tt.reason)
			}
		})
	}
}
