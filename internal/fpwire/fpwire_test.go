package fpwire

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/tidwall/gjson"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name, in string
		want     fingerprint.Spec
		field    string // the SpecError's pointer; "-" for none
	}{
		{"Empty", `{}`, fingerprint.Spec{}, "-"},
		{"All", `{"intent":["a","b.c"],"ignore":["t"],"required":["a"],"numbers":"jcs","headers":["X-A"],"query":["q"]}`,
			fingerprint.Spec{Intent: []string{"a", "b.c"}, Ignore: []string{"t"}, Required: []string{"a"}, Numbers: "jcs", Headers: []string{"X-A"}, Query: []string{"q"}}, "-"},
		{"EmptyList", `{"intent":[]}`, fingerprint.Spec{Intent: []string{}}, "-"},
		{"Invalid/Unknown", `{"intnet":["a"]}`, fingerprint.Spec{}, "/intnet"},
		{"Invalid/UnknownEscaped", `{"a/b~":1}`, fingerprint.Spec{}, "/a~1b~0"},
		{"Invalid/NotList", `{"intent":"a"}`, fingerprint.Spec{}, "/intent"},
		{"Invalid/NotString", `{"ignore":["a",1]}`, fingerprint.Spec{}, "/ignore/1"},
		{"Invalid/Null", `{"headers":null}`, fingerprint.Spec{}, "/headers"},
		{"Invalid/Numbers", `{"numbers":1}`, fingerprint.Spec{}, "/numbers"},
		{"Invalid/NotObject", `["intent"]`, fingerprint.Spec{}, ""},
		{"Invalid/Duplicate", `{"intent":["a"],"intent":["b"]}`, fingerprint.Spec{}, ""},
		{"Invalid/LoneSurrogate", `{"intent":["\ud800"]}`, fingerprint.Spec{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSpec([]byte(tt.in))
			if tt.field == "-" {
				if err != nil {
					t.Fatalf("ParseSpec(%s) = %v", tt.in, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("ParseSpec(%s) mismatch (-want +got):\n%s", tt.in, diff)
				}
				return
			}
			var se *fingerprint.SpecError
			if !errors.As(err, &se) || se.Pointer != tt.field || !errors.Is(err, fingerprint.ErrInvalidSpec) {
				t.Errorf("ParseSpec(%s) error = %v, want a SpecError at %q", tt.in, err, tt.field)
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	got, err := ParseRequest([]byte(`{"method":"POST","path":"/a","headers":{"X-A":["1","2"]},"query":{"q":[]},"bodyBase64":"eyJhIjoxfQ=="}`))
	if err != nil {
		t.Fatal(err)
	}
	want := fingerprint.Request{Method: "POST", Path: "/a", Header: http.Header{"X-A": {"1", "2"}}, Query: url.Values{"q": {}}, Body: []byte(`{"a":1}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseRequest mismatch (-want +got):\n%s", diff)
	}
	for _, in := range []string{`{"body":""}`, `{"bodyBase64":""}`, `{}`} {
		if r, err := ParseRequest([]byte(in)); err != nil || r.Body != nil {
			t.Errorf("ParseRequest(%s) = %+v, %v; want no body", in, r, err)
		}
	}
	for _, in := range []string{`{"bodyBase64":"eyJhIjoxfQ"}`, `{"method":1}`, `{"query":{"q":[1]}}`, "{\"body\":\"\xff\"}", `[]`} {
		var ie *InputError
		if _, err := ParseRequest([]byte(in)); !errors.As(err, &ie) {
			t.Errorf("ParseRequest(%s) error = %v, want an InputError", in, err)
		}
		if e := Classify(ie); e.Class != ClassInvalidInput {
			t.Errorf("Classify(%v).Class = %q", ie, e.Class)
		}
	}
}

func TestFrame(t *testing.T) {
	reqs := []fingerprint.Request{
		{},
		{Method: "POST", Path: "/v1/x", Header: http.Header{"X-A": {"1", ""}, "B": {}}, Query: url.Values{"q": {"1"}}, Body: []byte(`{"a":1}`)},
		{Method: "\xed\xa0\x80", Body: []byte("\xff")},
	}
	for _, r := range reqs {
		got, err := ReadFrame(AppendFrame(nil, r))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, got); diff != "" {
			t.Errorf("ReadFrame(AppendFrame(%+v)) mismatch (-want +got):\n%s", r, diff)
		}
	}
	full := AppendFrame(nil, reqs[1])
	for n := range len(full) {
		if _, err := ReadFrame(full[:n]); err == nil {
			t.Errorf("ReadFrame of %d of %d bytes succeeded", n, len(full))
		}
	}
	if _, err := ReadFrame(append(full, 0)); err == nil {
		t.Error("ReadFrame with a byte after the body succeeded")
	}
}

func TestAppendResult(t *testing.T) {
	f, err := fingerprint.Compile(fingerprint.Spec{Intent: []string{"a"}, Required: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ body, want string }{
		{`{"a":1,"a":2}`, `{"error":{"class":"duplicate-name","message":"canonical: byte 7 at /a: duplicate member name \"a\"","offset":7,"pointer":"/a"}}`},
		{`{"b":1}`, `{"error":{"class":"missing-required","message":"fingerprint: body \"a\": required value missing","name":"a","part":"body"}}`},
	} {
		fp, err := f.Sum(fingerprint.Request{Body: []byte(tt.body)})
		if got := string(AppendResult(nil, fp, nil, err)); got != tt.want {
			t.Errorf("AppendResult for %s mismatch (-want +got):\n%s", tt.body, cmp.Diff(tt.want, got))
		}
	}
	_, err = fingerprint.Compile(fingerprint.Spec{Intent: []string{"a", "a|b"}})
	if got, want := string(Classify(err).AppendJSON(nil)), `{"class":"invalid-path","field":"/intent/1","message":"fingerprint: spec /intent/1: invalid path: \"a|b\": pipes ('|') are not supported"}`; got != want {
		t.Errorf("AppendJSON mismatch (-want +got):\n%s", cmp.Diff(want, got))
	}
}

// TestSelectRequest checks that the one-pass reading of a request agrees
// with the slow one on every request of the vectors and on odd ones.
func TestSelectRequest(t *testing.T) {
	lines := []string{
		`{}`, `{"method":"PUT"}`, `{"body":""}`, `{"body":"\u0000\u001f\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`,
		`{"headers":{"X-\u0041":["a\nb",""],"B":[]},"query":{"q":["1","2"],"r":[]}}`,
		`{"headers":{}}`, `{"query":{}}`, `{"bodyBase64":"eyJhIjoxfQ=="}`, `{"bodyBase64":"eyJ"}`,
		`{"body":"1","bodyBase64":"MQ=="}`, `{"bodyBase64":"MQ==","body":"1"}`, `{"body":"1","body":"2"}`,
		`{"method":1}`, `{"headers":[]}`, `{"headers":{"a":"b"}}`, `{"headers":{"a":[1]}}`, `{"x":1}`,
		`[]`, `"a"`, ``, `{"body":"\ud800"}`, "{\"body\":\"\xff\"}", ` { "path" : "/a" } `,
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "positive.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", "negative.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(append(b, nb...), []byte("\n")) {
		if r := gjson.GetBytes(l, "request"); r.Exists() {
			lines = append(lines, r.Raw)
		}
	}
	for _, l := range lines {
		want, werr := parseRequestSlow([]byte(l))
		got, gerr := ParseRequest([]byte(l))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ParseRequest(%s) mismatch (-slow +fast):\n%s", l, diff)
		}
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("ParseRequest(%s) error = %v, slow %v", l, gerr, werr)
		}
	}
}
