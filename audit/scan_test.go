package audit

import (
	"bufio"
	"bytes"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scanLines are envelope lines that scanLine takes or leaves to gjson.
var scanLines = []struct {
	name, line string
	taken      bool // scanLine reads it
}{
	{"Taken/Minimal", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/"}`, true},
	{"Taken/Full", `{"time":"2025-01-06T00:00:00.007Z","method":"POST","path":"/v1/payments?x=1","tenant":"t","headers":{"Content-Type":"application/json","idempotency-key":"k-1","X-A":["1","2"],"x-a":"3","Host":"api.example.com","X-Empty":[]},"body":{"a":[1,{"b":"}]"}],"c":"\"("},"status":201,"duration":"314ms"}`, true},
	{"Taken/Spaces", " \t{ \"time\" : \"2025-01-06T00:00:00Z\" ,\"method\":\"GET\",\"path\":\"/\" , \"headers\" : { } , \"body\" : [ ] } \r\n", true},
	{"Taken/StringBody", `{"time":"2025-01-06T00:00:00Z","method":"POST","path":"/","body":"not json"}`, true},
	{"Taken/InvalidBody", `{"time":"2025-01-06T00:00:00Z","method":"POST","path":"/","body":{"a":(}}}`, true},
	{"Taken/EmptyHostFirst", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","headers":{"Host":"","host":"x"}}`, true},
	{"Gjson/EscapeInString", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"\/"}`, false},
	{"Gjson/EscapeInName", `{"\u0074ime":"2025-01-06T00:00:00Z","method":"GET","path":"/"}`, false},
	{"Gjson/NumberBody", `{"time":"2025-01-06T00:00:00Z","method":"POST","path":"/","body":12}`, false},
	{"Gjson/StatusFraction", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","status":200.0}`, false},
	{"Invalid/UnknownMember", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","x":1}`, false},
	{"Invalid/DuplicateMember", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","path":"/"}`, false},
	{"Invalid/DuplicateHeader", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","headers":{"A":[],"A":"1"}}`, false},
	{"Invalid/TwoHosts", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","headers":{"Host":"a","host":"b"}}`, false},
	{"Invalid/HeaderName", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","headers":{"A B":"1"}}`, false},
	{"Invalid/HeaderValue", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","headers":{"A":[1]}}`, false},
	{"Invalid/Missing", `{"time":"2025-01-06T00:00:00Z","method":"GET"}`, false},
	{"Invalid/Empty", `{}`, false},
	{"Invalid/Status", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","status":199}`, false},
	{"Invalid/StatusLeadingZero", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","status":0200}`, false},
	{"Invalid/Duration", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","duration":"-1s"}`, false},
	{"Invalid/Tenant", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","tenant":""}`, false},
	{"Invalid/TrailingComma", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/",}`, false},
	{"Invalid/Trailing", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/"} x`, false},
	{"Invalid/UnendedBody", `{"time":"2025-01-06T00:00:00Z","method":"GET","path":"/","body":{"a":1}`, false},
	{"Invalid/ControlCharacter", "{\"time\":\"2025-01-06T00:00:00Z\",\"method\":\"GET\",\"path\":\"/\",\"tenant\":\"a\tb\"}", false},
	{"Invalid/NotObject", `[1]`, false},
}

// checkScanLine holds scanLine to returning what parseLineGJSON returns,
// for the lines it takes.
func checkScanLine(t *testing.T, line string) (taken bool) {
	t.Helper()
	raw := []byte(line)
	got, gotCheck, ok := scanLine(line, raw)
	if !ok {
		return false
	}
	want, wantCheck, err := parseLineGJSON(line, raw)
	if err != nil {
		t.Fatalf("scanLine(%q) takes a line that parseLineGJSON rejects: %v", line, err)
	}
	opts := cmp.Options{
		cmp.AllowUnexported(entry{}),
		cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location().String() == b.Location().String() }),
		cmp.Comparer(func(a, b *url.URL) bool { return *a == *b }),
		cmp.Comparer(func(a, b http.Header) bool {
			return cmp.Equal(map[string][]string(a), map[string][]string(b)) && (a == nil) == (b == nil)
		}),
	}
	if diff := cmp.Diff(want, got, opts); diff != "" || gotCheck != wantCheck {
		t.Fatalf("scanLine(%q) mismatch (-parseLineGJSON +scanLine):\n%s\ncheckBody %v, want %v", line, diff, gotCheck, wantCheck)
	}
	return true
}

func TestScanLine(t *testing.T) {
	for _, tc := range scanLines {
		t.Run(tc.name, func(t *testing.T) {
			if taken := checkScanLine(t, tc.line); taken != tc.taken {
				t.Errorf("scanLine(%q) takes it: %v, want %v", tc.line, taken, tc.taken)
			}
		})
	}
	t.Run("Testdata", func(t *testing.T) {
		f, err := os.Open("../testdata/audit/payments.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		taken, n := 0, 0
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := bytes.TrimRight(sc.Bytes(), "\r\n")
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			n++
			if checkScanLine(t, string(line)) {
				taken++
			}
		}
		if taken < n/2 {
			t.Errorf("scanLine takes %d lines of %d", taken, n)
		}
	})
}

// FuzzScanLine: scanLine takes only lines that parseLineGJSON reads
// without error, and reads them the same way.
func FuzzScanLine(f *testing.F) {
	for _, tc := range scanLines {
		f.Add(tc.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		checkScanLine(t, line)
	})
}
