package problem

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendJSON(t *testing.T) {
	zero := int64(0)
	for _, tc := range []struct {
		name   string
		p      Details
		want   string
		reason string
	}{
		{"Zero", Details{}, `{}`, "every member only when set"},
		{"Core", Details{Type: Base + "x", Title: "T", Status: 409, Detail: "D."},
			`{"type":"https://idemprint.dev/problems/x","title":"T","status":409,"detail":"D."}`, "RFC 9457 §3.1 members, in order"},
		{"DifferingPaths", Details{Type: "t", DifferingPaths: []string{"a", "header x"}},
			`{"type":"t","differing_paths":["a","header x"]}`, "the engine's extension member"},
		{"BodyAtZero", Details{Status: 400, Line: 1, Column: 1, Offset: &zero, Pointer: "/a"},
			`{"status":400,"line":1,"column":1,"offset":0,"pointer":"/a"}`, "offset 0 is a location"},
		{"Request", Details{Part: "header", Name: "host"}, `{"part":"header","name":"host"}`, "what an invalid request is about"},
		{"InvalidUTF8", Details{Detail: "a\xffb"}, `{"detail":"a` + "\uFFFD" + `b"}`, "replaced, never failing the answer"},
		{"RetryAfterNotAMember", Details{Status: 503, RetryAfter: 2}, `{"status":503}`, "a header, not a member"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(tc.p.AppendJSON(nil))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("AppendJSON mismatch (-want +got) (%s):\n%s", tc.reason, diff)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("AppendJSON gave invalid JSON %s", got)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	w := httptest.NewRecorder()
	Write(w, &Details{Type: "t", Status: 503, RetryAfter: 3})
	got := map[string]string{
		"Content-Type":   w.Header().Get("Content-Type"),
		"Content-Length": w.Header().Get("Content-Length"),
		"Retry-After":    w.Header().Get("Retry-After"),
		"body":           w.Body.String(),
	}
	want := map[string]string{"Content-Type": "application/problem+json", "Content-Length": "25", "Retry-After": "3", "body": `{"type":"t","status":503}`}
	if w.Code != 503 {
		t.Errorf("status %d, want 503", w.Code)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Write mismatch (-want +got):\n%s", diff)
	}
}

func TestSentence(t *testing.T) {
	for _, tc := range [][3]string{
		{"policy: key too long", "policy: ", "Key too long."},
		{"Already", "x: ", "Already."},
		{"", "", "."},
	} {
		if got := Sentence(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Sentence(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}
