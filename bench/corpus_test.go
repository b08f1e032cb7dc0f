package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tidwall/gjson"
)

var (
	update = flag.Bool("update", false, "rewrite testdata/corpus from the generator")
	huge   = flag.Bool("huge", false, "benchmark the huge corpus cases too (wide_huge: 36 MB, seconds per operation for the peers)")
)

const corpusDir = "testdata/corpus"

// corpusFile is the committed file of a case. A huge case is generated
// instead: in full for a benchmark, and for a test at 1/hugeScale of its
// size (the same generator with fewer members).
func corpusFile(tb testing.TB, c corpusCase) []byte {
	tb.Helper()
	if c.huge {
		if _, ok := tb.(*testing.B); ok {
			return hugeFile(c)
		}
		return c.generate()
	}
	b, err := os.ReadFile(filepath.Join(corpusDir, c.name+".json"))
	if err != nil {
		tb.Fatalf("%v (run go generate in bench/)", err)
	}
	return b
}

func TestCorpus(t *testing.T) {
	if *update {
		if err := os.MkdirAll(corpusDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range corpusCases {
		t.Run(c.name, func(t *testing.T) {
			want := c.generate()
			if *update && !c.huge {
				if err := os.WriteFile(filepath.Join(corpusDir, c.name+".json"), want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := corpusFile(t, c)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s.json differs from the generator at %s; rewrite it with go generate", c.name, mismatch(want, got))
			}
			target := c.target
			if c.huge {
				target /= hugeScale
			}
			if lo, hi := target*8/10, target*12/10; len(got) < lo || len(got) > hi {
				t.Errorf("size %d B, want %d B ±20%%", len(got), target)
			}
			// Strict JSON: jsontext's defaults reject duplicate names,
			// invalid UTF-8 and lone surrogates.
			strict := jsontext.Value(bytes.Clone(got))
			if err := strict.Canonicalize(); err != nil {
				t.Errorf("not strict JSON: %v", err)
			}
			// Every number within double range, so every peer accepts it.
			var v any
			if err := json.Unmarshal(got, &v); err != nil {
				t.Errorf("encoding/json: %v", err)
			}
			for _, p := range c.intent {
				if r := gjson.GetBytes(got, p); !r.Exists() || r.IsArray() && len(r.Array()) == 0 {
					t.Errorf("intent path %q selects nothing", p)
				}
			}
		})
	}
}

// hugeFiles holds the huge cases once generated.
var hugeFiles sync.Map // name → func() []byte

func hugeFile(c corpusCase) []byte {
	f, _ := hugeFiles.LoadOrStore(c.name, sync.OnceValue(c.generateHuge))
	return f.(func() []byte)()
}

// mismatch describes where want and got first differ, with a little context
// rather than both documents in full.
func mismatch(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(i-32, 0)
	return "byte " + strconv.Itoa(i) + " (len want " + strconv.Itoa(len(want)) + ", got " + strconv.Itoa(len(got)) + "):\n\twant …" +
		quoteWindow(want, lo, i+32) + "\n\tgot  …" + quoteWindow(got, lo, i+32)
}

func quoteWindow(b []byte, lo, hi int) string {
	hi = min(hi, len(b))
	lo = min(lo, hi)
	return strconv.Quote(string(b[lo:hi]))
}
