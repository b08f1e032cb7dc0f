package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/fpwire"
)

// jsonlVector is what the line protocol tests read of a published vector:
// the spec and request as they are written, and the expected answer.
type jsonlVector struct {
	Name        string          `json:"name"`
	Spec        json.RawMessage `json:"spec"`
	Request     json.RawMessage `json:"request"`
	Intent      string          `json:"intent"`
	Fingerprint string          `json:"fingerprint"`
	Error       *jsonlError     `json:"error"`
}

// jsonlError is an error as the vectors and the line protocol write it;
// Message is the protocol's only, and not compared.
type jsonlError struct {
	Class   string  `json:"class"`
	Field   string  `json:"field,omitempty"`
	Offset  *int64  `json:"offset,omitempty"`
	Pointer *string `json:"pointer,omitempty"`
	Part    string  `json:"part,omitempty"`
	Name    string  `json:"name,omitempty"`
	Message string  `json:"message,omitempty"`
}

// jsonlOutput is one result line.
type jsonlOutput struct {
	Fingerprint string      `json:"fingerprint,omitempty"`
	Intent      string      `json:"intent,omitempty"`
	Error       *jsonlError `json:"error,omitempty"`
}

func readJSONLVectors(t *testing.T) []jsonlVector {
	t.Helper()
	var vs []jsonlVector
	for _, file := range []string{"positive.jsonl", "negative.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vectors", file))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			var v jsonlVector
			if err := json.Unmarshal(line, &v); err != nil {
				t.Fatalf("%s:%d: %v", file, i+1, err)
			}
			vs = append(vs, v)
		}
	}
	return vs
}

// TestJSONLVectors runs every published vector through the line protocol,
// one process per spec with that spec's requests as its lines, and
// requires the vector's answer on the line of each.
func TestJSONLVectors(t *testing.T) {
	vs := readJSONLVectors(t)
	if len(vs) < 1000 {
		t.Fatalf("%d vectors, want at least 1000", len(vs))
	}
	bySpec := map[string][]jsonlVector{}
	var order []string
	for _, v := range vs {
		if v.Request == nil {
			t.Run(v.Name, func(t *testing.T) { checkSpecVector(t, v) })
			continue
		}
		k := string(v.Spec)
		if _, ok := bySpec[k]; !ok {
			order = append(order, k)
		}
		bySpec[k] = append(bySpec[k], v)
	}
	for _, spec := range order {
		group := bySpec[spec]
		var in bytes.Buffer
		for _, v := range group {
			in.Write(v.Request)
			in.WriteByte('\n')
		}
		got := runCLI([]string{"fingerprint", "--jsonl", "--show", "--spec", spec}, in.String())
		if got.Code != 0 || got.Stderr != "" {
			t.Fatalf("--spec %s: status %d, stderr %q", spec, got.Code, got.Stderr)
		}
		lines := strings.Split(strings.TrimSuffix(got.Stdout, "\n"), "\n")
		if len(lines) != len(group) {
			t.Fatalf("--spec %s: %d result lines for %d requests", spec, len(lines), len(group))
		}
		for i, v := range group {
			var out jsonlOutput
			if err := json.Unmarshal([]byte(lines[i]), &out); err != nil {
				t.Fatalf("%s: result line %q: %v", v.Name, lines[i], err)
			}
			if out.Error != nil {
				out.Error.Message = ""
			}
			want := jsonlOutput{Fingerprint: v.Fingerprint, Intent: v.Intent, Error: v.Error}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("%s: result mismatch (-want +got):\n%s", v.Name, diff)
			}
		}
	}
}

// checkSpecVector checks a vector whose spec does not compile: --spec is
// a usage error, and the classification the WebAssembly module reports is
// the vector's.
func checkSpecVector(t *testing.T, v jsonlVector) {
	got := runCLI([]string{"fingerprint", "--jsonl", "--spec", string(v.Spec)}, "")
	if got.Code != exitUsage || got.Stdout != "" || !strings.Contains(got.Stderr, "--spec") {
		t.Errorf("--jsonl --spec %s = %+v, want status 2 and a message", v.Spec, got)
	}
	s, err := fpwire.ParseSpec(v.Spec)
	if err == nil {
		_, err = fingerprint.Compile(s)
	}
	if err == nil {
		t.Fatalf("spec %s compiles", v.Spec)
	}
	e := fpwire.Classify(err)
	if diff := cmp.Diff(*v.Error, jsonlError{Class: e.Class, Field: e.Field}); diff != "" {
		t.Errorf("spec %s: error mismatch (-want +got):\n%s", v.Spec, diff)
	}
}

func TestJSONL(t *testing.T) {
	pol := filepath.Join("..", "..", "testdata", "policy", "payments.json")
	const pay = `{"method":"POST","path":"/v1/payments","body":"{\"amountCents\":1000,\"currency\":\"EUR\",\"destination\":{\"iban\":\"DE89\"}}"}`
	const payFP = "v1:sha256:"
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string // result lines; a want ending in payFP prefix-matches
		code  int
	}{
		{"Spec", []string{"--spec", `{"intent":["a"]}`},
			`{"method":"POST","path":"/x","body":"{\"a\":1,\"b\":2}"}` + "\n" + `{"method":"POST","path":"/x","body":"{\"b\":3, \"a\":1.0}"}` + "\n",
			[]string{`{"fingerprint":"v1:sha256:`, `{"fingerprint":"v1:sha256:`}, 0},
		{"NoFinalNewline", []string{"--spec", `{}`}, `{"body":"1"}`, []string{`{"fingerprint":"v1:sha256:`}, 0},
		{"Empty", []string{"--spec", `{}`}, ``, nil, 0},
		{"MalformedLinesAndOn", []string{"--spec", `{}`},
			"not json\n\n" + `{"body":"1","body":"2"}` + "\n" + `{"bodyy":"1"}` + "\n" + `{"body":"1","bodyBase64":"MQ=="}` + "\n" + `{"headers":{"a":"b"}}` + "\n" + `{"body":"{\"a\":1,\"a\":2}"}` + "\n" + `{"body":"1"}` + "\n",
			[]string{
				`{"error":{"class":"invalid-input","message":"fpwire: byte 0: invalid literal \"not\"","offset":0,"pointer":""}}`,
				`{"error":{"class":"invalid-input","message":"fpwire: byte 0: unexpected end of input","offset":0,"pointer":""}}`,
				`{"error":{"class":"invalid-input","message":"fpwire: byte 12 at /body: duplicate member name \"body\"","offset":12,"pointer":"/body"}}`,
				`{"error":{"class":"invalid-input","message":"fpwire: byte 9 at /bodyy: invalid input: unknown member \"bodyy\" (want method, path, headers, query, body or bodyBase64)","offset":9,"pointer":"/bodyy"}}`,
				`{"error":{"class":"invalid-input","message":"fpwire: byte 25 at /bodyBase64: invalid input: want one of body and bodyBase64, not both","offset":25,"pointer":"/bodyBase64"}}`,
				`{"error":{"class":"invalid-input","message":"fpwire: byte 16 at /headers/a: invalid input: want an array of strings","offset":16,"pointer":"/headers/a"}}`,
				`{"error":{"class":"duplicate-name","message":"canonical: byte 7 at /a: duplicate member name \"a\"","offset":7,"pointer":"/a"}}`,
				`{"fingerprint":"v1:sha256:`,
			}, 0},
		{"Policy", []string{"--policy", pol, "--route", "POST /v1/payments"},
			pay + "\n" + `{"method":"POST","path":"/v1/refunds","body":"{}"}` + "\n" + `{"method":"POST","path":"/v1/payments","body":"{}"}` + "\n",
			[]string{
				`{"fingerprint":"v1:sha256:`,
				`{"error":{"class":"invalid-input","message":"fpwire: byte 0 at /path: invalid input: POST /v1/refunds is matched by the rule /rules/2 POST /v1/refunds, not by /rules/0 POST /v1/payments of --route","offset":0,"pointer":"/path"}}`,
				`{"error":{"class":"missing-required","message":"fingerprint: body \"amountCents\": required value missing","name":"amountCents","part":"body"}}`,
			}, 0},
		{"Policy/NoRule", []string{"--policy", pol, "--route", "GET /v1/payments"}, pay, nil, 1},
		{"Usage/SpecDoesNotCompile", []string{"--spec", `{"intent":["a|b"]}`}, pay, nil, 2},
		{"Usage/SpecNotJSON", []string{"--spec", `{intent}`}, pay, nil, 2},
		{"Usage/SpecWithoutJSONL", []string{"--spec", `{}`, "--no-jsonl"}, "", nil, 2},
		{"Usage/NoSpec", []string{}, "", nil, 2},
		{"Usage/SpecAndPolicy", []string{"--spec", `{}`, "--policy", pol, "--route", "POST /v1/payments"}, "", nil, 2},
		{"Usage/PolicyWithoutRoute", []string{"--policy", pol}, "", nil, 2},
		{"Usage/IntentFlag", []string{"--spec", `{}`, "--intent", "a"}, "", nil, 2},
		{"Usage/File", []string{"--spec", `{}`, "body.json"}, "", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"fingerprint", "--jsonl"}, tt.args...)
			if tt.name == "Usage/SpecWithoutJSONL" {
				args = []string{"fingerprint", "--spec", `{}`}
			}
			got := runCLI(args, tt.stdin)
			if got.Code != tt.code {
				t.Fatalf("run(%q) = %+v, want status %d", args, got, tt.code)
			}
			if tt.code != 0 {
				if got.Stdout != "" || got.Stderr == "" {
					t.Errorf("run(%q) = %+v, want a message on stderr only", args, got)
				}
				return
			}
			lines := strings.Split(strings.TrimSuffix(got.Stdout, "\n"), "\n")
			if got.Stdout == "" {
				lines = nil
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("run(%q): %d lines, want %d:\n%s", args, len(lines), len(tt.want), got.Stdout)
			}
			for i, w := range tt.want {
				if strings.HasSuffix(w, payFP) {
					if !strings.HasPrefix(lines[i], w) || len(lines[i]) != len(w)+45 {
						t.Errorf("line %d = %s, want a fingerprint", i+1, lines[i])
					}
					continue
				}
				if lines[i] != w {
					t.Errorf("line %d mismatch (-want +got):\n%s", i+1, cmp.Diff(w, lines[i]))
				}
			}
		})
	}
}

// TestJSONLAgreesWithFingerprint checks that a --jsonl result is what the
// one-shot command prints for the same request.
func TestJSONLAgreesWithFingerprint(t *testing.T) {
	const body = `{"b":[1.50,2],"a":"x","traceId":"t"}`
	one := runCLI([]string{"fingerprint", "--intent", "a", "--intent", "b", "--ignore", "traceId", "--method", "PUT", "--path", "/v1/x"}, body)
	line, _ := json.Marshal(map[string]string{"method": "PUT", "path": "/v1/x", "body": body})
	got := runCLI([]string{"fingerprint", "--jsonl", "--spec", `{"intent":["a","b"],"ignore":["traceId"]}`}, string(line)+"\n")
	if one.Code != 0 || got.Code != 0 {
		t.Fatalf("one-shot %+v, --jsonl %+v", one, got)
	}
	want := `{"fingerprint":"` + strings.TrimSpace(one.Stdout) + `"}` + "\n"
	if got.Stdout != want {
		t.Errorf("--jsonl mismatch (-want +got):\n%s", cmp.Diff(want, got.Stdout))
	}
}

// TestJSONLFlushes sends one line at a time and waits for its answer
// before sending the next, as a caller that keeps one process does: a
// result held in a buffer would stop the test.
func TestJSONLFlushes(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"fingerprint", "--jsonl", "--spec", `{}`}, inR, outW, io.Discard)
		outW.Close()
	}()
	results := bufio.NewReader(outR)
	for i, line := range []string{`{"body":"1"}`, `not json`, `{"body":"[1]"}`} {
		answered := make(chan string, 1)
		go func() {
			s, _ := results.ReadString('\n')
			answered <- s
		}()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-answered:
			if !strings.HasPrefix(s, `{"`) || !strings.HasSuffix(s, "}\n") {
				t.Errorf("line %d: result %q", i+1, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("line %d: no result while the caller waits", i+1)
		}
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Errorf("status %d at the end of the input, want 0", code)
	}
}

// BenchmarkJSONL times the line protocol on the payment body of the
// benchmark corpus, 10,000 lines a run of the command, against
// fingerprint.Sum of the same request in the same process: the line
// protocol's target is half of Sum's requests a second. ns/op is per
// request in both.
func BenchmarkJSONL(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "..", "bench", "testdata", "corpus", "payment_small.json"))
	if err != nil {
		b.Fatal(err)
	}
	const spec = `{"intent":["amountCents","currency","destination.iban","reference","debtor.id"]}`
	line, _ := json.Marshal(map[string]any{"method": "POST", "path": "/v1/payments", "headers": map[string]any{}, "query": map[string]any{}, "body": string(body)})
	const lines = 10_000
	in := bytes.Repeat(append(line, '\n'), lines)
	b.Run("jsonl", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for i := 0; i < b.N; i += lines {
			if code := run([]string{"fingerprint", "--jsonl", "--spec", spec}, bytes.NewReader(in), io.Discard, io.Discard); code != 0 {
				b.Fatal(code)
			}
		}
	})
	b.Run("sum", func(b *testing.B) {
		s, _ := fpwire.ParseSpec([]byte(spec))
		f, err := fingerprint.Compile(s)
		if err != nil {
			b.Fatal(err)
		}
		r := fingerprint.Request{Method: "POST", Path: "/v1/payments", Body: body}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Sum(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
