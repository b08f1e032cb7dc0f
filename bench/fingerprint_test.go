package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gowebpki/jcs"
	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/tidwall/gjson"
)

// A summer is one way to fingerprint a request body by the intent paths.
// setup returns a function that keeps what it reuses between calls.
type summer struct {
	name  string
	setup func(tb testing.TB, intent []string) func(body []byte) error
}

// Results go to package variables, so no call can be optimized away.
var (
	fingerprintSink fingerprint.Fingerprint
	sumSink         [sha256.Size]byte
)

var summers = []summer{
	{"idemprint-sum", func(tb testing.TB, intent []string) func([]byte) error {
		f, err := fingerprint.Compile(fingerprint.Spec{Intent: intent})
		if err != nil {
			tb.Fatal(err)
		}
		return func(body []byte) (err error) {
			fingerprintSink, err = f.Sum(fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: body})
			return err
		}
	}},
	{"gjson-naive", func(_ testing.TB, intent []string) func([]byte) error {
		// What people write by hand: the raw texts gjson selects, hashed
		// as they are. Member order inside a selected object, whitespace
		// and number spellings all change the hash, and a duplicate name
		// is read first-wins.
		var buf []byte
		return func(body []byte) error {
			buf = buf[:0]
			for _, r := range gjson.GetManyBytes(body, intent...) {
				buf = append(append(buf, r.Raw...), 0)
			}
			sumSink = sha256.Sum256(buf)
			return nil
		}
	}},
	{"encoding-json", func(_ testing.TB, intent []string) func([]byte) error {
		// Decode everything, pick the values, encode them again: numbers
		// go through float64 and duplicate names are read last-wins.
		paths := make([][]string, len(intent))
		for i, p := range intent {
			paths[i] = strings.Split(p, ".")
		}
		return func(body []byte) error {
			var doc map[string]any
			if err := json.Unmarshal(body, &doc); err != nil {
				return err
			}
			picked := make([]any, len(paths))
			for i, p := range paths {
				picked[i] = pickPath(doc, p)
			}
			out, err := json.Marshal(picked)
			if err != nil {
				return err
			}
			sumSink = sha256.Sum256(out)
			return nil
		}
	}},
	{"sha256-raw", func(testing.TB, []string) func([]byte) error {
		return func(body []byte) error {
			sumSink = sha256.Sum256(body)
			return nil
		}
	}},
}

// pickPath follows a dotted path with "#" (every element) through a decoded
// document; nil for nothing.
func pickPath(v any, path []string) any {
	for i, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			if seg != "#" {
				return nil
			}
			out := make([]any, len(x))
			for j, e := range x {
				out[j] = pickPath(e, path[i+1:])
			}
			return out
		default:
			return nil
		}
	}
	return v
}

func BenchmarkSum(b *testing.B) {
	for _, c := range corpusCases {
		if c.intent == nil {
			continue
		}
		body := corpusFile(b, c)
		b.Run(c.name, func(b *testing.B) {
			for _, impl := range summers {
				b.Run(impl.name, func(b *testing.B) {
					sum := impl.setup(b, c.intent)
					if err := sum(body); err != nil { // warm up reused buffers
						b.Fatal(err)
					}
					b.SetBytes(int64(len(body)))
					b.ReportAllocs()
					for b.Loop() {
						if err := sum(body); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// TestSumStable checks that re-encoding a body as the peers do leaves its
// fingerprint unchanged, in both number modes.
func TestSumStable(t *testing.T) {
	for _, c := range corpusCases {
		if c.intent == nil {
			continue
		}
		for _, numbers := range []string{"", "jcs"} {
			t.Run(c.name+"/numbers="+numbers, func(t *testing.T) {
				f, err := fingerprint.Compile(fingerprint.Spec{Intent: c.intent, Numbers: numbers})
				if err != nil {
					t.Fatal(err)
				}
				body := corpusFile(t, c)
				viaJCS, err := jcs.Transform(body)
				if err != nil {
					t.Fatal(err)
				}
				viaJSONText := jsontext.Value(bytes.Clone(body))
				if err := viaJSONText.Canonicalize(); err != nil {
					t.Fatal(err)
				}
				if err := viaJSONText.Indent(jsontext.WithIndent("\t")); err != nil {
					t.Fatal(err)
				}
				var want fingerprint.Fingerprint
				for i, b := range [][]byte{body, viaJCS, viaJSONText} {
					got, err := f.Sum(fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: b})
					if err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						want = got
					} else if got != want {
						t.Errorf("body %d: Sum = %v, want %v as for the original body", i, got, want)
					}
				}
			})
		}
	}
}

// BenchmarkSumVsAppend compares, on every Sum case of the corpus, Sum with
// the case's intent paths against canonical.Append of the same body in the
// same number mode (Exact, Spec's default): selecting the intent should
// cost no more than canonicalizing the whole body.
func BenchmarkSumVsAppend(b *testing.B) {
	for _, c := range corpusCases {
		if c.intent == nil {
			continue
		}
		body := corpusFile(b, c)
		b.Run(c.name, func(b *testing.B) {
			b.Run("sum", func(b *testing.B) {
				f, err := fingerprint.Compile(fingerprint.Spec{Intent: c.intent})
				if err != nil {
					b.Fatal(err)
				}
				req := fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: body}
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if fingerprintSink, err = f.Sum(req); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("append", func(b *testing.B) {
				opts := canonical.Options{Numbers: canonical.Exact}
				buf, err := opts.Append(nil, body)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if buf, err = opts.Append(buf[:0], body); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
