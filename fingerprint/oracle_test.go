package fingerprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/canonical"
	"github.com/tidwall/gjson"
)

// oracleSelect evaluates p on the canonical text val the slow, obvious way:
// one gjson lookup per segment, "#" by iterating the array. It is the
// reference the one-pass trie walk must agree with.
func oracleSelect(val string, segs []segment, where string) (out string, holes []string, ok bool) {
	if len(segs) == 0 {
		return val, nil, true
	}
	seg := segs[0]
	isArray, isObject := val[0] == '[', val[0] == '{'
	if seg.all {
		if !isArray {
			return "", nil, false
		}
		var parts []string
		i := 0
		gjson.Parse(val).ForEach(func(_, v gjson.Result) bool {
			w := join(where, strconv.Itoa(i))
			o, h, ok := oracleSelect(v.Raw, segs[1:], w)
			if ok {
				parts = append(parts, o)
			} else {
				rest := w
				for _, s := range segs[1:] {
					rest = join(rest, s.key)
				}
				h = []string{rest}
			}
			holes = append(holes, h...)
			i++
			return true
		})
		return "[" + strings.Join(parts, ",") + "]", holes, true
	}
	if isArray && seg.index < 0 || !isArray && !isObject {
		return "", nil, false
	}
	r := gjson.Get(val, seg.key)
	if !r.Exists() {
		return "", nil, false
	}
	return oracleSelect(r.Raw, segs[1:], join(where, seg.key))
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

// randomValue writes a random JSON value made of few names, so that random
// paths often match, and of strings that look like JSON.
func randomValue(r *rand.Rand, depth int) string {
	names := []string{"a", "b", "0", "1", "items", "#x"}
	switch k := r.IntN(10); {
	case depth > 3 || k < 3:
		return []string{`1`, `"x"`, `"[1]"`, `"{\"a\":1}"`, `null`, `true`, `2.50`, `[]`, `{}`}[r.IntN(9)]
	case k < 6:
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = randomValue(r, depth+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		perm := r.Perm(len(names))[:r.IntN(4)]
		parts := make([]string, len(perm))
		for i, j := range perm {
			parts[i] = strconv.Quote(names[j]) + ":" + randomValue(r, depth+1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}

func randomPath(r *rand.Rand) string {
	segs := []string{"a", "b", "0", "1", "items", "#", `\#x`, `\0`}
	n := 1 + r.IntN(4)
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, segs[r.IntN(len(segs))])
	}
	if parts[len(parts)-1] == "#" {
		parts[len(parts)-1] = "a"
	}
	return strings.Join(parts, ".")
}

// TestWalkMatchesGJSON checks the one-pass selection against oracleSelect on
// random bodies and random sets of paths.
func TestWalkMatchesGJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 4000; n++ {
		var intent []string
		seen := map[string]bool{}
		for k := 1 + r.IntN(4); len(intent) < k; {
			p := randomPath(r)
			if !seen[p] {
				seen[p] = true
				intent = append(intent, p)
			}
		}
		f, err := Compile(Spec{Intent: intent})
		if err != nil {
			t.Fatalf("Compile(%q): %v", intent, err)
		}
		body := randomValue(r, 0)
		canon, err := canonical.Options{Numbers: canonical.Exact}.Transform([]byte(body))
		if err != nil {
			t.Fatalf("body %s: %v", body, err)
		}
		doc, err := f.AppendIntent(nil, Request{Method: "POST", Body: []byte(body)})
		if err != nil {
			t.Fatalf("AppendIntent(%s): %v", body, err)
		}
		var got struct {
			Absent map[string][]string        `json:"absent"`
			Intent map[string]json.RawMessage `json:"intent"`
		}
		if err := json.Unmarshal(doc, &got); err != nil {
			t.Fatal(err)
		}
		wantIntent := map[string]string{}
		wantAbsent := map[string][]string{}
		for _, p := range f.intent {
			out, holes, ok := oracleSelect(string(canon), p.segs, "")
			if !ok {
				wantAbsent[p.text] = []string{p.text}
				continue
			}
			wantIntent[p.text] = out
			if len(holes) > 0 {
				wantAbsent[p.text] = holes
			}
		}
		gotIntent := map[string]string{}
		for k, v := range got.Intent {
			gotIntent[k] = string(v)
		}
		if got.Absent == nil {
			got.Absent = map[string][]string{}
		}
		if diff := cmp.Diff(fmt.Sprint(wantIntent, wantAbsent), fmt.Sprint(gotIntent, got.Absent)); diff != "" {
			t.Fatalf("paths %q on %s: walk differs from gjson (-want +got):\n%s", intent, canon, diff)
		}
	}
}

// TestReviewedPathsAndDuplicates pins review findings: a decimal segment
// with leading zeros, which gjson reads as another index, is rejected; one
// field's entry never counts as a duplicate of another field's.
func TestReviewedPathsAndDuplicates(t *testing.T) {
	if _, err := Compile(Spec{Intent: []string{"a.01"}}); !errors.Is(err, ErrInvalidPath) {
		t.Errorf(`Compile(intent "a.01") = %v, want ErrInvalidPath`, err)
	}
	if _, err := Compile(Spec{Intent: []string{`a.\01`}}); err != nil {
		t.Errorf(`Compile(intent "a.\01") = %v, want a member path`, err)
	}
	for _, s := range []Spec{
		{Intent: []string{"ignore:x"}, Ignore: []string{"x"}},
		{Intent: []string{"header:x-a"}, Headers: []string{"X-A"}},
		{Intent: []string{"query:q"}, Query: []string{"q"}},
	} {
		if _, err := Compile(s); err != nil {
			t.Errorf("Compile(%+v) = %v, want no error", s, err)
		}
	}
}
