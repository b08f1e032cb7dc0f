package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/fpwire"
)

// agreeSeed seeds the generated requests of TestAgree.
const agreeSeed = 0x1de3_7417_0030

// An agreeCase is a generated request under one spec, and what it is to
// the first request of its group: a re-spelling or a change of an ignored
// field has the same fingerprint, an intent change a different one, and
// an invalid body none.
type agreeCase struct {
	Spec    json.RawMessage `json:"spec"`
	Request agreeRequest    `json:"request"`
	group   int
	kind    string // "base", "same", "differ" or "invalid"
}

type agreeRequest struct {
	Method     string              `json:"method"`
	Path       string              `json:"path"`
	Headers    map[string][]string `json:"headers"`
	Query      map[string][]string `json:"query"`
	Body       *string             `json:"body,omitempty"`
	BodyBase64 *string             `json:"bodyBase64,omitempty"`
}

var agreeSpecs = []string{
	`{"intent":["amountCents","currency","destination.iban","items.#.sku","items.#.qty"],"ignore":["traceId","meta.sentAt"],"required":["amountCents","currency"],"headers":["X-Account"],"query":["dryRun"]}`,
	`{"ignore":["traceId","meta.sentAt","note"],"headers":["X-Account"]}`,
	`{"numbers":"jcs","ignore":["traceId","sentAt"],"query":["dryRun","page"]}`,
	`{"intent":["items"],"ignore":["note"]}`,
}

// agreeGen draws requests and spells their bodies in many ways.
type agreeGen struct{ r *rand.Rand }

// body returns a payment-like body: qty, of the first item, counts under
// every spec; trace and sentAt under none.
func (g *agreeGen) body(amount, items, qty int, trace, sentAt string) map[string]any {
	list := []any{}
	for i := range items {
		it := map[string]any{"sku": "SKU-" + strconv.Itoa(i), "qty": json.Number(strconv.Itoa(qty + i))}
		if i == 1 {
			it["note"] = "gift wrap é"
		}
		list = append(list, it)
	}
	return map[string]any{
		"amountCents": json.Number(strconv.Itoa(amount)),
		"currency":    "EUR",
		"destination": map[string]any{"iban": "DE89370400440532013000", "name": "Ada \"Lovelace\""},
		"items":       list,
		"traceId":     trace,
		"meta":        map[string]any{"sentAt": sentAt, "client": "ios"},
		"ratio":       json.Number("0.5"),
	}
}

// spell writes v as JSON with shuffled members, irregular whitespace,
// escaped characters and other spellings of its numbers.
func (g *agreeGen) spell(dst []byte, v any) []byte {
	ws := func() {
		for range g.r.IntN(3) {
			dst = append(dst, " \t\n\r"[g.r.IntN(4)])
		}
	}
	ws()
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = g.str(dst, k)
			ws()
			dst = append(dst, ':')
			dst = g.spell(dst, v[k])
		}
		dst = append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = g.spell(dst, e)
		}
		dst = append(dst, ']')
	case json.Number:
		dst = append(dst, g.number(string(v))...)
	case string:
		dst = g.str(dst, v)
	}
	ws()
	return dst
}

// number respells a decimal: 1000 as 1000.0, 1e3, 10000E-1 or 1000.
func (g *agreeGen) number(s string) string {
	switch g.r.IntN(4) {
	case 0:
		if !strings.Contains(s, ".") {
			return s + ".0"
		}
		return s + "00"
	case 1:
		return s + "e0"
	case 2:
		if !strings.Contains(s, ".") {
			return s + "0E-1"
		}
	}
	return s
}

// str writes s as a JSON string, escaping some characters that need none.
func (g *agreeGen) str(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', byte(c))
		case g.r.IntN(8) == 0:
			dst = append(dst, `\u`...)
			dst = append(dst, []byte(strconv.FormatInt(0x10000+int64(c), 16))[1:]...)
		case c == '/' && g.r.IntN(2) == 0:
			dst = append(dst, `\/`...)
		default:
			dst = append(dst, string(c)...)
		}
	}
	return append(dst, '"')
}

// invalid breaks a valid body in one of several ways.
func (g *agreeGen) invalid(body []byte) []byte {
	switch g.r.IntN(7) {
	case 0: // a duplicate member, equal after unescaping
		return append([]byte(`{"amo\u0075ntCents":1,`), bytes.TrimLeft(body, " \t\n\r{")...)
	case 1: // truncated
		return body[:g.r.IntN(len(body))]
	case 2: // invalid UTF-8, in the first member name
		i := bytes.IndexByte(body, '"') + 1
		return append(append(append([]byte{}, body[:i]...), 0xff), body[i:]...)
	case 3: // a lone surrogate, in the first member name
		i := bytes.IndexByte(body, '"') + 1
		return append(append(append([]byte{}, body[:i]...), `\ud800`...), body[i:]...)
	case 4: // a trailing comma
		return append(bytes.TrimRight(body, " \t\n\r}"), ",}"...)
	case 5: // too deep
		return []byte(strings.Repeat("[", 10001) + strings.Repeat("]", 10001))
	default: // a number beyond the exact range, or a leading zero
		if g.r.IntN(2) == 0 {
			return append(append([]byte(`[1e9999999999,`), body...), ']')
		}
		return append(append([]byte(`[012,`), body...), ']')
	}
}

// agreeCases draws n groups of requests.
func agreeCases(n int) []agreeCase {
	g := &agreeGen{rand.New(rand.NewPCG(agreeSeed, 30))}
	var cases []agreeCase
	for group := range n {
		spec := json.RawMessage(agreeSpecs[group%len(agreeSpecs)])
		amount, items, qty := 100+g.r.IntN(100000), 1+g.r.IntN(3), 1+g.r.IntN(5)
		req := func(body []byte, hdr, dry string) agreeRequest {
			r := agreeRequest{Method: "POST", Path: "/v1/payments", Headers: map[string][]string{hdr: {"acc_1"}, "User-Agent": {"ua-" + strconv.Itoa(g.r.IntN(9))}},
				Query: map[string][]string{"dryRun": {dry}, "utm": {strconv.Itoa(g.r.IntN(9))}}}
			if !json.Valid(body) || !bytes.Equal(bytes.ToValidUTF8(body, nil), body) {
				b := base64.StdEncoding.EncodeToString(body)
				r.BodyBase64 = &b
			} else {
				s := string(body)
				r.Body = &s
			}
			return r
		}
		add := func(kind string, r agreeRequest) {
			cases = append(cases, agreeCase{Spec: spec, Request: r, group: group, kind: kind})
		}
		base := g.body(amount, items, qty, "t-0", "2024-05-01T10:00:00Z")
		add("base", req(g.spell(nil, base), "X-Account", "false"))
		for range 3 { // re-spellings, header names in other cases
			add("same", req(g.spell(nil, base), []string{"x-account", "X-ACCOUNT", "X-Account"}[g.r.IntN(3)], "false"))
		}
		add("same", req(g.spell(nil, g.body(amount, items, qty, "t-"+strconv.Itoa(1+g.r.IntN(99)), "2025-01-01T00:00:00Z")), "X-Account", "false"))
		add("differ", req(g.spell(nil, g.body(amount, items, qty+1, "t-0", "2024-05-01T10:00:00Z")), "X-Account", "false"))
		add("invalid", req(g.invalid(g.spell(nil, base)), "X-Account", "false"))
	}
	return cases
}

// TestAgree runs a few thousand generated requests through native Go
// (fingerprint.Sum), the line protocol (run with --jsonl) and, when node
// and js/idemprint.wasm are there, the npm package, and requires the same
// result line from all three; it also checks what each request is to the
// first of its group.
func TestAgree(t *testing.T) {
	cases := agreeCases(500)

	// Native Go.
	native := make([]string, len(cases))
	fps := make([]string, len(cases))
	for i, c := range cases {
		line, _ := json.Marshal(c.Request)
		r, err := fpwire.ParseRequest(line)
		if err != nil {
			t.Fatal(err)
		}
		s, err := fpwire.ParseSpec(c.Spec)
		if err != nil {
			t.Fatal(err)
		}
		f, err := fingerprint.Compile(s)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := f.Sum(r)
		native[i] = string(fpwire.AppendResult(nil, fp, nil, err))
		if err == nil {
			fps[i] = fp.String()
		}
	}
	var base string
	counts := map[string]int{}
	for i, c := range cases {
		counts[c.kind]++
		ok := true
		switch c.kind {
		case "base":
			base = fps[i]
			ok = base != ""
		case "same":
			ok = fps[i] == base
		case "differ":
			ok = fps[i] != "" && fps[i] != base
		case "invalid":
			ok = fps[i] == ""
		}
		if !ok {
			line, _ := json.Marshal(c.Request)
			t.Errorf("group %d, %s request %s: %s (the group's first: %s)", c.group, c.kind, line, native[i], base)
		}
	}
	t.Logf("%d requests: %v", len(cases), counts)

	// The line protocol, one process per spec.
	for si, spec := range agreeSpecs {
		var in bytes.Buffer
		var idx []int
		for i, c := range cases {
			if string(c.Spec) == spec {
				line, _ := json.Marshal(c.Request)
				in.Write(append(line, '\n'))
				idx = append(idx, i)
			}
		}
		got := runCLI([]string{"fingerprint", "--jsonl", "--spec", spec}, in.String())
		lines := strings.Split(strings.TrimSuffix(got.Stdout, "\n"), "\n")
		if got.Code != 0 || len(lines) != len(idx) {
			t.Fatalf("spec %d: --jsonl status %d, %d lines for %d requests: %s", si, got.Code, len(lines), len(idx), got.Stderr)
		}
		for j, i := range idx {
			if lines[j] != native[i] {
				t.Errorf("case %d: --jsonl and native Go differ (-native +jsonl):\n%s", i, cmp.Diff(native[i], lines[j]))
			}
		}
	}

	// The npm package.
	node, err := exec.LookPath("node")
	wasm := filepath.Join("..", "..", "js", "idemprint.wasm")
	if _, serr := os.Stat(wasm); err != nil || serr != nil {
		t.Skip("the npm package is not checked: it needs node and js/idemprint.wasm (build it with js/build.sh)")
	}
	var in bytes.Buffer
	for _, c := range cases {
		line, _ := json.Marshal(c)
		in.Write(append(line, '\n'))
	}
	cmd := exec.Command(node, "--no-warnings", filepath.Join("..", "..", "js", "tools", "cases.js"))
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("node wrote %d lines for %d requests", len(lines), len(cases))
	}
	for i := range cases {
		if lines[i] != native[i] {
			t.Errorf("case %d: the npm package and native Go differ (-native +npm):\n%s", i, cmp.Diff(native[i], lines[i]))
		}
	}
}
