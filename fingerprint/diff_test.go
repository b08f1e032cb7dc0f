package fingerprint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oracleDiff is Diff the obvious way: decode each value again at every
// level with encoding/json. It is quadratic in the depth of the documents,
// which is why Diff no longer works like this, but it is easy to read: the
// reference that Diff must agree with, up to MaxDifferences.
func oracleDiff(a, b []byte) ([]Difference, error) {
	type doc struct {
		top    map[string]json.RawMessage
		sub    map[string]map[string]json.RawMessage
		absent map[string][]string
	}
	parse := func(b []byte) (*doc, error) {
		d := &doc{sub: map[string]map[string]json.RawMessage{}}
		if err := json.Unmarshal(b, &d.top); err != nil || d.top["method"] == nil || d.top["path"] == nil {
			return nil, errNotDocument
		}
		for part, name := range map[string]string{"header": "headers", "query": "query", "intent": "intent"} {
			if raw := d.top[name]; raw != nil {
				var m map[string]json.RawMessage
				if err := json.Unmarshal(raw, &m); err != nil {
					return nil, errNotDocument
				}
				d.sub[part] = m
			}
		}
		if raw := d.top["absent"]; raw != nil {
			if err := json.Unmarshal(raw, &d.absent); err != nil {
				return nil, errNotDocument
			}
		}
		return d, nil
	}
	keys := func(ms ...map[string]json.RawMessage) []string {
		var ks []string
		for _, m := range ms {
			for k := range m {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		return slices.Compact(ks)
	}
	nilIfEmpty := func(b []byte) []byte {
		if len(b) == 0 {
			return nil
		}
		return b
	}
	var values func(out []Difference, p string, a, b []byte) []Difference
	values = func(out []Difference, p string, a, b []byte) []Difference {
		if bytes.Equal(a, b) {
			return out
		}
		if len(a) > 0 && len(b) > 0 && a[0] == b[0] && a[0] == '{' {
			var ma, mb map[string]json.RawMessage
			json.Unmarshal(a, &ma)
			json.Unmarshal(b, &mb)
			for _, k := range keys(ma, mb) {
				var seg strings.Builder
				writeSegment(&seg, k)
				out = values(out, join(p, seg.String()), ma[k], mb[k])
			}
			return out
		}
		if len(a) > 0 && len(b) > 0 && a[0] == b[0] && a[0] == '[' {
			var la, lb []json.RawMessage
			json.Unmarshal(a, &la)
			json.Unmarshal(b, &lb)
			if len(la) == len(lb) {
				for i := range la {
					out = values(out, join(p, strconv.Itoa(i)), la[i], lb[i])
				}
				return out
			}
		}
		return append(out, Difference{Part: "body", Path: p, First: nilIfEmpty(a), Second: nilIfEmpty(b)})
	}
	holes := func(list []string, p string) []string {
		var out []string
		for _, h := range list {
			if h != p {
				out = append(out, h)
			}
		}
		return out
	}

	da, err := parse(a)
	if err != nil {
		return nil, err
	}
	db, err := parse(b)
	if err != nil {
		return nil, err
	}
	var out []Difference
	for _, part := range []string{"method", "path"} {
		if !bytes.Equal(da.top[part], db.top[part]) {
			out = append(out, Difference{Part: part, First: da.top[part], Second: db.top[part]})
		}
	}
	for _, part := range []string{"header", "query"} {
		ma, mb := da.sub[part], db.sub[part]
		for _, k := range keys(ma, mb) {
			if !bytes.Equal(ma[k], mb[k]) {
				out = append(out, Difference{Part: part, Path: k, First: ma[k], Second: mb[k]})
			}
		}
	}
	if da.top["body"] != nil || db.top["body"] != nil {
		out = values(out, "", da.top["body"], db.top["body"])
	}
	ia, ib := da.sub["intent"], db.sub["intent"]
	absent := map[string]json.RawMessage{}
	for k := range da.absent {
		absent[k] = nil
	}
	for k := range db.absent {
		absent[k] = nil
	}
	for _, k := range keys(ia, ib, absent) {
		ha, hb := holes(da.absent[k], k), holes(db.absent[k], k)
		if multiValue(k) && (!bytes.Equal(ia[k], ib[k]) || !slices.Equal(ha, hb)) {
			out = append(out, Difference{Part: "body", Path: k, First: ia[k], Second: ib[k], FirstAbsent: ha, SecondAbsent: hb})
			continue
		}
		out = values(out, k, ia[k], ib[k])
	}
	if len(out) > MaxDifferences {
		out = out[:MaxDifferences]
	}
	return out, nil
}

// TestDiffMatchesOracle compares Diff with oracleDiff on the intent
// documents of random bodies under random specs, whole-body and with
// intent paths.
func TestDiffMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 3000; n++ {
		var spec Spec
		if r.IntN(3) > 0 {
			for k := 1 + r.IntN(4); len(spec.Intent) < k; {
				if p := randomPath(r); !slices.Contains(spec.Intent, p) {
					spec.Intent = append(spec.Intent, p)
				}
			}
		}
		f, err := Compile(spec)
		if err != nil {
			t.Fatalf("Compile(%+v): %v", spec, err)
		}
		var docs [2][]byte
		for i := range docs {
			body := randomValue(r, 0)
			if docs[i], err = f.AppendIntent(nil, Request{Method: "POST", Body: []byte(body)}); err != nil {
				t.Fatalf("AppendIntent(%s): %v", body, err)
			}
		}
		want, wantErr := oracleDiff(docs[0], docs[1])
		got, err := Diff(docs[0], docs[1])
		if err != nil || wantErr != nil {
			t.Fatalf("Diff(%s, %s): %v, oracle %v", docs[0], docs[1], err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("Diff(%s, %s) mismatch (-oracle +got):\n%s", docs[0], docs[1], diff)
		}
	}
}

// TestDiffInvalid checks that what is not an intent document is an error,
// whatever depth the problem is at.
func TestDiffInvalid(t *testing.T) {
	doc := `{"absent":{},"headers":{},"method":"GET","path":"","query":{}}`
	for _, tc := range []struct{ name, doc string }{
		{"DuplicateTopMember", `{"method":"GET","path":"","method":"PUT"}`},
		{"DuplicateBodyMember", `{"body":{"a":{"b":1,"b":2}},"method":"GET","path":""}`},
		{"DuplicateIntent", `{"intent":{"a":1,"a":2},"method":"GET","path":""}`},
		{"HeadersNotObject", `{"headers":[],"method":"GET","path":""}`},
		{"Truncated", `{"body":[[[`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := strings.Replace(doc, `"path":""`, `"body":{"a":{"c":1}},"path":""`, 1)
			if _, err := Diff([]byte(tc.doc), []byte(other)); err == nil {
				t.Errorf("Diff(%s, doc): want an error", tc.doc)
			}
		})
	}
}

// deepDocuments returns the intent documents of two whole bodies that
// differ only at the bottom of depth nested arrays, below a string of size
// bytes: the shape that made Diff quadratic, since it decoded the rest of
// the body again at every level.
func deepDocuments(t testing.TB, depth, size int) (a, b []byte) {
	t.Helper()
	f, err := Compile(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	body := func(fill string) []byte {
		return []byte(`{"amountCents":1,"currency":"EUR","destination":{"iban":"x"},"x":` +
			strings.Repeat("[", depth) + `"` + strings.Repeat(fill, size) + `"` + strings.Repeat("]", depth) + `}`)
	}
	if a, err = f.AppendIntent(nil, Request{Method: "POST", Path: "/p", Body: body("A")}); err != nil {
		t.Fatal(err)
	}
	if b, err = f.AppendIntent(nil, Request{Method: "POST", Path: "/p", Body: body("B")}); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// wideDocuments returns the intent documents of two bodies with n members
// that all differ.
func wideDocuments(t testing.TB, n int) (a, b []byte) {
	t.Helper()
	f, err := Compile(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	body := func(v int) []byte {
		var sb strings.Builder
		sb.WriteString("{")
		for i := 0; i < n; i++ {
			if i > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `"m%d":{"v":[%d]}`, i, v)
		}
		return []byte(sb.String() + "}")
	}
	if a, err = f.AppendIntent(nil, Request{Method: "POST", Path: "/p", Body: body(1)}); err != nil {
		t.Fatal(err)
	}
	if b, err = f.AppendIntent(nil, Request{Method: "POST", Path: "/p", Body: body(2)}); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestDiffWork counts Diff's work (values visited, bytes compared, bytes
// of paths written) rather than timing it: on the deep shape at every
// depth and on wide documents, the work stays within a small multiple of
// the documents' length, where the quadratic Diff decoded depth × length
// bytes.
func TestDiffWork(t *testing.T) {
	type shape struct {
		name string
		a, b []byte
	}
	var shapes []shape
	for _, depth := range []int{10, 1000, 2000, 4000, 8000} {
		for _, size := range []int{10, 10_000} {
			a, b := deepDocuments(t, depth, size)
			shapes = append(shapes, shape{fmt.Sprintf("Deep/%d/%dB", depth, size), a, b})
		}
	}
	for _, n := range []int{10, 1000, 50_000} {
		a, b := wideDocuments(t, n)
		shapes = append(shapes, shape{fmt.Sprintf("Wide/%d", n), a, b})
	}
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			var d differ
			diffs, err := d.diff(s.a, s.b)
			if err != nil {
				t.Fatal(err)
			}
			if len(diffs) == 0 || len(diffs) > MaxDifferences {
				t.Errorf("%d differences, want 1 to %d", len(diffs), MaxDifferences)
			}
			if limit := 2 * (len(s.a) + len(s.b)); d.work > limit {
				t.Errorf("work = %d for documents of %d and %d bytes, want at most %d", d.work, len(s.a), len(s.b), limit)
			}
		})
	}
}

// TestDiffBound checks that Diff stops at MaxDifferences, the first ones in
// its order.
func TestDiffBound(t *testing.T) {
	a, b := wideDocuments(t, 1000)
	got, err := Diff(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxDifferences {
		t.Fatalf("%d differences, want %d", len(got), MaxDifferences)
	}
	// Members in the order of their names: m0, m1, m10, m100, m101, ...
	names := make([]string, 1000)
	for i := range names {
		names[i] = "m" + strconv.Itoa(i)
	}
	slices.Sort(names)
	for i, d := range got {
		if want := names[i] + ".v.0"; d.Path != want {
			t.Fatalf("difference %d at %q, want %q", i, d.Path, want)
		}
	}
}

func BenchmarkDiff(b *testing.B) {
	for _, depth := range []int{1000, 2000, 4000, 8000} {
		for _, size := range []int{10_000, 100_000} {
			x, y := deepDocuments(b, depth, size)
			b.Run(fmt.Sprintf("Deep/depth=%d/size=%d", depth, size), func(b *testing.B) {
				b.SetBytes(int64(len(x) + len(y)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Diff(x, y); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	for _, n := range []int{1000, 10_000, 100_000} {
		x, y := wideDocuments(b, n)
		b.Run(fmt.Sprintf("Wide/members=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(x) + len(y)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Diff(x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
