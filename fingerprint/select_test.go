package fingerprint_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
)

// TestIntentFromBodyAsSent checks that the intent document is the same
// whether Sum walks the body as sent, selecting and canonicalizing only the
// parts it hashes, or the body already in canonical form: whitespace,
// escaped names and strings, number spellings, member order, ignored
// members, holes in "#" selections and names that need their escapes read.
func TestIntentFromBodyAsSent(t *testing.T) {
	spec := fingerprint.Spec{
		Intent:   []string{"amount", "items.#.sku", "items.#.meta", "tags", "c\\.d", "1", "\\1", "empty"},
		Ignore:   []string{"traceId", "items.#.meta.at"},
		Required: []string{"amount"},
	}
	f, err := fingerprint.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	bodies := []struct{ name, body string }{
		{"Tidy", `{"amount":1250,"items":[{"sku":"A","meta":{"at":1,"by":"x"}},{"qty":2}],"tags":["a","b"],"c.d":true,"1":{"z":1,"y":2},"empty":{}}`},
		{"Untidy", " {\n\t\"t\\u0061gs\" : [ \"a\" , \"\\u0062\" ] , \"\\u0031\":{ \"z\":1.0,\"y\" :2e0 }, \"items\":[ {\"meta\" : { \"by\":\"x\" , \"at\":1 } , \"s\\u006bu\":\"A\"} ,{ \"qty\":20E-1}\t] ,\"amount\":12.50e2,\"c.d\" :true,\"traceId\":\"t-\\/1\",\"empty\":{ } } \r\n"},
		{"EscapesInSelected", `{"amount":1250,"items":[{"sku":"\u0041","meta":{"by":"\u0078","at":[1, 2]}},{"qty":2}],"tags":["\u00e9","\ud83d\ude00","\t"],"c.d":true,"1":{"y":2,"z":1},"empty":{}}`},
	}
	for _, b := range bodies {
		t.Run(b.name, func(t *testing.T) {
			canon, err := canonical.Options{Numbers: canonical.Exact}.Transform([]byte(b.body))
			if err != nil {
				t.Fatal(err)
			}
			want, err := f.AppendIntent(nil, fingerprint.Request{Method: "POST", Body: canon})
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.AppendIntent(nil, fingerprint.Request{Method: "POST", Body: []byte(b.body)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("AppendIntent(%s) mismatch with its canonical form (-want +got):\n%s", b.name, diff)
			}
		})
	}
}
