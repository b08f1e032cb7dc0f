package fingerprint

import (
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/internal/httpsyntax"
	"github.com/idemprint/idemprint/internal/jsonwire"
	"github.com/tidwall/gjson"
)

// Spec declares what of a request is its intent. The zero value counts the
// method, the path and the whole body, with exact numbers. Its JSON form (the
// field tags) is the "fingerprint" object of a policy file.
type Spec struct {
	// Intent lists the body paths that count, in the subset of the gjson
	// path syntax described in the package documentation. Empty means the
	// whole body counts, less what Ignore removes.
	Intent []string `json:"intent,omitempty"`
	// Ignore lists what never counts. An entry of one segment ("traceId")
	// drops members of that name at every depth; an entry of several
	// ("meta.sentAt", "items.#.note") drops exactly that path from the root.
	// With Intent, Ignore removes inside the selected values.
	Ignore []string `json:"ignore,omitempty"`
	// Required lists paths that must be present; with Intent, each must be
	// one of the Intent paths. A path through "#" requires it in every
	// element.
	Required []string `json:"required,omitempty"`
	// Numbers is "exact" (the default when empty: an amount never rounds
	// into another) or "jcs" (RFC 8785 numbers, doubles).
	Numbers string `json:"numbers,omitempty"`
	// Headers lists request headers that identify the operation, such as an
	// account or API-version header. Names are case-insensitive.
	Headers []string `json:"headers,omitempty"`
	// Query lists query parameters that identify the operation. Their order
	// in the URL does not matter; repeated values count in order.
	Query []string `json:"query,omitempty"`
}

// segment is one component of a compiled path.
type segment struct {
	all   bool   // "#": every element of an array
	key   string // the component as gjson reads it, escapes included
	name  string // the unescaped name, canonically escaped, without quotes
	index int    // the array index a decimal component selects, or -1
}

// path is a compiled Intent, Required or Ignore entry.
type path struct {
	text     string
	quoted   string // text as a canonical JSON string
	segs     []segment
	required bool
}

// Fingerprinter computes fingerprints for one compiled [Spec]. It is
// immutable, so one value may be used by many goroutines at once. The zero
// value is not usable; call [Compile].
type Fingerprinter struct {
	spec        Spec
	digest      string
	prefix      []byte // SHA-256 state after "idemprint/fingerprint/v1\n" + digest + "\n"
	canon       canonical.Options
	wire        jsonwire.Options // canon, for the one pass over a body (select.go)
	intent      []path           // sorted by the canonical order of their text
	required    []path           // without Intent: the paths that must be present
	ignoreNames []string         // canonically escaped, without quotes
	ignorePaths []path
	headers     []header // sorted by lower-case name
	host        bool     // Headers names Host
	query       []string // sorted
	walked      []path   // intent, or without it required
	nodes       []node   // the trie of walked; nodes[0] is the root
}

type header struct {
	lower string // the name in the document
}

// maxIgnorePaths bounds the multi-segment Ignore entries, which are matched
// with one bit each.
const maxIgnorePaths = 64

// Compile checks s and prepares it for [Fingerprinter.Sum]. Problems are
// reported as a [*SpecError] naming the field, such as "/intent/2".
func Compile(s Spec) (*Fingerprinter, error) {
	f := &Fingerprinter{spec: cloneSpec(s)}
	switch s.Numbers {
	case "", "exact":
		f.canon.Numbers = canonical.Exact
	case "jcs":
		f.canon.Numbers = canonical.JCS
	default:
		return nil, specErr("/numbers", ErrInvalidSpec, `unknown number mode `+strconv.Quote(s.Numbers)+` (want "exact" or "jcs")`)
	}
	f.wire = jsonwire.Options{Numbers: jsonwire.NumberMode(f.canon.Numbers), MaxDepth: canonical.DefaultMaxDepth}

	// seen holds {field, entry}; intentAt an intent path's index in f.intent.
	seen := make(map[[2]string]bool, len(s.Intent)+len(s.Ignore)+len(s.Required)+len(s.Headers)+len(s.Query))
	intentAt := make(map[string]int, len(s.Intent))
	f.intent = make([]path, 0, len(s.Intent))
	for i, text := range s.Intent {
		ptr := "/intent/" + strconv.Itoa(i)
		p, err := parsePath(ptr, text)
		if err != nil {
			return nil, err
		}
		if p.segs[len(p.segs)-1].all {
			return nil, specErr(ptr, ErrInvalidPath, strconv.Quote(text)+` ends in "#", which gjson reads as a count; name the array itself instead`)
		}
		if seen[[2]string{"intent", text}] {
			return nil, specErr(ptr, ErrInvalidSpec, "duplicate intent path "+strconv.Quote(text))
		}
		seen[[2]string{"intent", text}] = true
		intentAt[text] = len(f.intent)
		f.intent = append(f.intent, p)
	}

	for i, text := range s.Ignore {
		ptr := "/ignore/" + strconv.Itoa(i)
		p, err := parsePath(ptr, text)
		if err != nil {
			return nil, err
		}
		if last := p.segs[len(p.segs)-1]; last.all || last.index >= 0 && len(p.segs) > 1 {
			return nil, specErr(ptr, ErrInvalidPath, strconv.Quote(text)+` ends in "#" or an index; ignore a member, not array elements (write a member named like a number as "\1")`)
		}
		if seen[[2]string{"ignore", text}] {
			return nil, specErr(ptr, ErrInvalidSpec, "duplicate ignore entry "+strconv.Quote(text))
		}
		seen[[2]string{"ignore", text}] = true
		if len(p.segs) == 1 {
			f.ignoreNames = append(f.ignoreNames, p.segs[0].name)
			continue
		}
		if len(f.ignorePaths) == maxIgnorePaths {
			return nil, specErr(ptr, ErrInvalidSpec, "more than "+strconv.Itoa(maxIgnorePaths)+" ignore paths")
		}
		f.ignorePaths = append(f.ignorePaths, p)
	}

	for i, text := range s.Required {
		ptr := "/required/" + strconv.Itoa(i)
		p, err := parsePath(ptr, text)
		if err != nil {
			return nil, err
		}
		if seen[[2]string{"required", text}] {
			return nil, specErr(ptr, ErrInvalidSpec, "duplicate required path "+strconv.Quote(text))
		}
		seen[[2]string{"required", text}] = true
		if len(s.Intent) == 0 {
			if p.segs[len(p.segs)-1].all {
				return nil, specErr(ptr, ErrInvalidPath, strconv.Quote(text)+` ends in "#"; name the array itself instead`)
			}
			p.required = true
			f.required = append(f.required, p)
			continue
		}
		j, ok := intentAt[text]
		if !ok {
			return nil, specErr(ptr, ErrInvalidSpec, "required path "+strconv.Quote(text)+" is not an intent path")
		}
		f.intent[j].required = true
	}

	// A path that Ignore would remove cannot also count.
	ignoreNames := make(map[string]bool, len(f.ignoreNames))
	for _, n := range f.ignoreNames {
		ignoreNames[n] = true
	}
	for _, group := range []struct {
		field string
		paths []path
	}{{"intent", f.intent}, {"required", f.required}} {
		for _, p := range group.paths {
			if msg := f.ignoredBy(p, ignoreNames); msg != "" {
				src := s.Intent
				if group.field == "required" {
					src = s.Required
				}
				return nil, specErr("/"+group.field+"/"+strconv.Itoa(indexString(src, p.text)), ErrInvalidSpec, msg)
			}
		}
	}

	for i, name := range s.Headers {
		ptr := "/headers/" + strconv.Itoa(i)
		if !httpsyntax.IsToken(name) {
			return nil, specErr(ptr, ErrInvalidSpec, "header name "+strconv.Quote(name)+" is not an HTTP token")
		}
		lower := strings.ToLower(name)
		if seen[[2]string{"header", lower}] {
			return nil, specErr(ptr, ErrInvalidSpec, "duplicate header "+strconv.Quote(name)+" (names are case-insensitive)")
		}
		seen[[2]string{"header", lower}] = true
		f.headers = append(f.headers, header{lower: lower})
		f.host = f.host || lower == "host"
	}
	for i, name := range s.Query {
		ptr := "/query/" + strconv.Itoa(i)
		if name == "" || !utf8.ValidString(name) {
			return nil, specErr(ptr, ErrInvalidSpec, "query parameter name "+strconv.Quote(name)+" is empty or not UTF-8")
		}
		if seen[[2]string{"query", name}] {
			return nil, specErr(ptr, ErrInvalidSpec, "duplicate query parameter "+strconv.Quote(name))
		}
		seen[[2]string{"query", name}] = true
		f.query = append(f.query, name)
	}

	// Sort everything the document lists by the canonical order of names.
	order, err := canonicalOrder(pathTexts(f.intent))
	if err != nil {
		return nil, err
	}
	f.intent = permute(f.intent, order)
	lowers := make([]string, len(f.headers))
	for i, h := range f.headers {
		lowers[i] = h.lower
	}
	if order, err = canonicalOrder(lowers); err != nil {
		return nil, err
	}
	f.headers = permute(f.headers, order)
	if order, err = canonicalOrder(f.query); err != nil {
		return nil, err
	}
	f.query = permute(f.query, order)

	f.buildTrie()
	if f.digest, err = f.computeDigest(); err != nil {
		return nil, err
	}
	// Every preimage starts with the same bytes: hash them once.
	h := sha256.New()
	h.Write([]byte(preimagePrefix + f.digest + "\n"))
	if f.prefix, err = h.(encoding.BinaryMarshaler).MarshalBinary(); err != nil {
		return nil, err
	}
	return f, nil
}

// preimagePrefix starts every preimage: the format and its version.
const preimagePrefix = "idemprint/fingerprint/v1\n"

// Spec returns a copy of the Spec that f was compiled from.
func (f *Fingerprinter) Spec() Spec { return cloneSpec(f.spec) }

// SpecDigest returns "sha256:" and the unpadded base64url SHA-256 of the
// normalized spec. Specs that differ only in the order of their lists or the
// case of header names have the same digest. A stored record whose spec
// digest differs from the current one was fingerprinted under other rules.
func (f *Fingerprinter) SpecDigest() string { return f.digest }

// computeDigest hashes the canonical JSON of the normalized spec.
func (f *Fingerprinter) computeDigest() (string, error) {
	ignore := append([]string(nil), f.spec.Ignore...)
	required := append([]string(nil), f.spec.Required...)
	lists := [][]string{ignore, required}
	for _, l := range lists {
		order, err := canonicalOrder(l)
		if err != nil {
			return "", err
		}
		copy(l, permute(l, order))
	}
	numbers := "exact"
	if f.canon.Numbers == canonical.JCS {
		numbers = "jcs"
	}
	doc := []byte(`{"headers":`)
	doc = appendStrings(doc, len(f.headers), func(i int) string { return f.headers[i].lower })
	doc = append(doc, `,"ignore":`...)
	doc = appendStrings(doc, len(ignore), func(i int) string { return ignore[i] })
	doc = append(doc, `,"intent":`...)
	doc = appendStrings(doc, len(f.intent), func(i int) string { return f.intent[i].text })
	doc = append(doc, `,"numbers":"`+numbers+`","query":`...)
	doc = appendStrings(doc, len(f.query), func(i int) string { return f.query[i] })
	doc = append(doc, `,"required":`...)
	doc = appendStrings(doc, len(required), func(i int) string { return required[i] })
	doc = append(doc, `,"version":1}`...)
	sum := sha256.Sum256(doc)
	return "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// appendStrings appends a JSON array of n strings; they are valid UTF-8,
// which Compile checked.
func appendStrings(dst []byte, n int, at func(int) string) []byte {
	dst = append(dst, '[')
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst, _ = canonical.AppendString(dst, at(i))
	}
	return append(dst, ']')
}

// parsePath compiles one path of the documented subset.
func parsePath(ptr, text string) (path, error) {
	bad := func(msg string) (path, error) {
		return path{}, specErr(ptr, ErrInvalidPath, strconv.Quote(text)+": "+msg)
	}
	if text == "" {
		return bad("empty path")
	}
	if !utf8.ValidString(text) {
		return bad("not valid UTF-8")
	}
	q, err := canonical.AppendString(nil, text)
	if err != nil {
		return bad("not valid UTF-8")
	}
	p := path{text: text, quoted: string(q)}
	var name []byte
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) {
			switch c := text[i]; c {
			case '\\':
				if i+1 == len(text) {
					return bad("ends in a lone backslash")
				}
				i++
				name = append(name, text[i])
				continue
			case '|':
				return bad("pipes ('|') are not supported")
			case '*', '?':
				return bad("wildcards ('*', '?') are not supported: name every intent field; escape a literal one with '\\'")
			case '.':
			default:
				if i == start {
					switch c {
					case '@':
						return bad("modifiers ('@') are not supported: gjson registers them globally")
					case '[', '{':
						return bad("multipaths are not supported: declare each path on its own")
					case '!':
						return bad("literals ('!') are not supported")
					case '#':
						if i+1 < len(text) && text[i+1] != '.' {
							return bad("queries ('#(...)') and names starting with '#' are not supported; escape a literal '#' as '\\#'")
						}
					}
				} else if c == '#' {
					return bad("an unescaped '#' must be a whole segment; escape a literal one as '\\#'")
				}
				name = append(name, c)
				continue
			}
		}
		key := text[start:i]
		if key == "" {
			return bad("empty segment (paths like 'a..b' or '.a' are not supported)")
		}
		seg := segment{key: key, index: -1, all: key == "#"}
		if !seg.all {
			esc, err := canonical.AppendString(nil, string(name))
			if err != nil {
				return bad("not valid UTF-8")
			}
			seg.name = string(esc[1 : len(esc)-1])
			if strings.Trim(key, "0123456789") != "" {
				// A name: not an index.
			} else if n, err := strconv.Atoi(key); err == nil && strconv.Itoa(n) == key {
				seg.index = n
			} else {
				// gjson reads "01" as index 1; one spelling per index.
				return bad("segment " + strconv.Quote(key) + " is not a canonical index: write it without leading zeros, or escape it (\\" + key + ") to name a member")
			}
		}
		p.segs = append(p.segs, seg)
		name = name[:0]
		start = i + 1
	}
	return p, nil
}

// ignoredBy says why Ignore would remove (part of the way to) p, or "".
// names holds the one-segment Ignore entries (f.ignoreNames).
func (f *Fingerprinter) ignoredBy(p path, names map[string]bool) string {
	for _, s := range p.segs {
		if !s.all && names[s.name] {
			return strconv.Quote(p.text) + " goes through a member that ignore drops everywhere (" + strconv.Quote(s.key) + ")"
		}
	}
	for _, q := range f.ignorePaths {
		if len(q.segs) > len(p.segs) {
			continue
		}
		overlap := true
		for d, qs := range q.segs {
			ps := p.segs[d]
			switch {
			case qs.all:
				overlap = ps.all || ps.index >= 0
			case qs.index >= 0:
				// An index, or a member with that name (also written "\0").
				overlap = ps.all || ps.name == qs.name
			default:
				overlap = !ps.all && ps.name == qs.name
			}
			if !overlap {
				break
			}
		}
		if overlap {
			return strconv.Quote(p.text) + " is removed by ignore path " + strconv.Quote(q.text)
		}
	}
	return ""
}

// canonicalOrder returns the permutation that sorts names as RFC 8785 sorts
// member names. It lets canonical do the sorting, so the two never disagree.
func canonicalOrder(names []string) ([]int, error) {
	doc := []byte{'{'}
	for i, n := range names {
		if i > 0 {
			doc = append(doc, ',')
		}
		var err error
		if doc, err = canonical.AppendString(doc, n); err != nil {
			return nil, specErr("", ErrInvalidSpec, "name "+strconv.Quote(n)+" is not valid UTF-8")
		}
		doc = append(doc, ':')
		doc = strconv.AppendInt(doc, int64(i), 10)
	}
	doc = append(doc, '}')
	sorted, err := canonical.Transform(doc)
	if err != nil {
		return nil, specErr("", ErrInvalidSpec, err.Error())
	}
	order := make([]int, 0, len(names))
	var iterErr error
	gjson.ParseBytes(sorted).ForEach(func(_, v gjson.Result) bool {
		order = append(order, int(v.Int()))
		return true
	})
	return order, iterErr
}

func permute[T any](s []T, order []int) []T {
	out := make([]T, len(s))
	for i, j := range order {
		out[i] = s[j]
	}
	return out
}

func pathTexts(ps []path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.text
	}
	return out
}

func indexString(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

func cloneSpec(s Spec) Spec {
	c := func(l []string) []string {
		if l == nil {
			return nil
		}
		return append([]string(nil), l...)
	}
	return Spec{Intent: c(s.Intent), Ignore: c(s.Ignore), Required: c(s.Required), Numbers: s.Numbers, Headers: c(s.Headers), Query: c(s.Query)}
}
