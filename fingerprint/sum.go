package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"io"
	"math/bits"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/idemprint/idemprint/canonical"
	"github.com/tidwall/gjson"
)

// Request is what identifies one operation: the method, the concrete path
// (path parameters are intent), the query, the headers and the body. The
// zero value is a GET of "" with no body.
type Request struct {
	// Method is the HTTP method; "" means GET, as in net/http. Methods are
	// case-sensitive (RFC 9110 §9.1).
	Method string
	// Path is the concrete request path, such as /v1/accounts/acc_1/transfers.
	// Prefer the escaped form (URL.EscapedPath), in which /a%2Fb and /a/b
	// are different paths.
	Path string
	// Query holds the query parameters; only those the Spec names count,
	// and one without values is absent.
	Query url.Values
	// Header holds the request headers; only those the Spec names count,
	// and one without values is absent. Keys are matched case-insensitively;
	// two keys that differ only in case are an error.
	Header http.Header
	// Body is the JSON body. An empty body is no body: every path is absent.
	// Anything else must be one strict JSON text.
	Body []byte
}

// state is the scratch space of one Sum call.
type state struct {
	body   []byte // canonical body
	intent []byte // the "body" or "intent" member being built
	absent []byte // the content of the "absent" member being built
	holes  int    // holes recorded for the current path; -1: not recording
	first  []byte // the current path's first hole
	where  []byte // the concrete path being evaluated
	tmp    []byte
	buf    []byte // the preimage
}

var statePool = sync.Pool{New: func() any { return new(state) }}

// maxRetained keeps a pooled state from pinning the memory of one huge body.
const maxRetained = 1 << 20

func putState(st *state) {
	for _, b := range []*[]byte{&st.body, &st.intent, &st.absent, &st.first, &st.where, &st.tmp, &st.buf} {
		if cap(*b) > maxRetained {
			*b = nil
		}
	}
	statePool.Put(st)
}

// Sum returns the fingerprint of r: the SHA-256 of the preimage
//
//	"idemprint/fingerprint/v1\n" + SpecDigest() + "\n" + AppendIntent(nil, r)
//
// An invalid body is reported as a *canonical.Error; a missing required
// value or a header, query value or path that is not UTF-8 as a
// [*RequestError]. In steady state Sum does not allocate.
func (f *Fingerprinter) Sum(r Request) (Fingerprint, error) {
	st := statePool.Get().(*state)
	defer putState(st)
	buf := append(st.buf[:0], f.prefix...)
	buf, err := f.appendDocument(buf, st, &r)
	st.buf = buf
	if err != nil {
		return Fingerprint{}, err
	}
	return Fingerprint{version: 1, sum: sha256.Sum256(buf)}, nil
}

// AppendIntent appends the canonical intent document of r, the part of the
// preimage that describes the request, to dst; see the package documentation
// for its members. On error it returns dst unchanged and the error Sum would
// return.
func (f *Fingerprinter) AppendIntent(dst []byte, r Request) ([]byte, error) {
	st := statePool.Get().(*state)
	defer putState(st)
	out, err := f.appendDocument(dst, st, &r)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// SumHTTP returns the fingerprint of r, reading its body and putting back an
// equal one, so the next handler reads the same bytes. It reads the whole
// body: bound it first, for example with [http.MaxBytesReader]. The path is
// URL.EscapedPath(), so /a%2Fb and /a/b differ; a declared Host header is
// read from r.Host; a query that does not parse is an error when the Spec
// declares query parameters.
func (f *Fingerprinter) SumHTTP(r *http.Request) (Fingerprint, error) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			return Fingerprint{}, &RequestError{Part: "body", Err: &detail{ErrInvalidRequest, "reading the body: " + err.Error()}}
		}
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil && len(f.query) > 0 {
		// URL.Query drops what it cannot parse; a declared parameter
		// must not silently disappear.
		return Fingerprint{}, &RequestError{Part: "query", Err: &detail{ErrInvalidRequest, err.Error()}}
	}
	hdr := r.Header
	if f.host && r.Host != "" && len(hdr.Values("Host")) == 0 {
		// net/http moves Host out of the header map.
		hdr = hdr.Clone()
		if hdr == nil {
			hdr = http.Header{}
		}
		hdr.Set("Host", r.Host)
	}
	return f.Sum(Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: query, Header: hdr, Body: body})
}

// appendDocument appends the intent document. Members, in canonical order:
// absent, body (whole-body mode, when there is one), headers, intent (with
// Intent paths), method, path, query.
func (f *Fingerprinter) appendDocument(dst []byte, st *state, r *Request) ([]byte, error) {
	var err error
	st.body = st.body[:0]
	if len(r.Body) > 0 {
		if st.body, err = f.canon.Append(st.body, r.Body); err != nil {
			return dst, err
		}
	}
	if err := f.selectIntent(st); err != nil {
		return dst, err
	}

	n := len(dst)
	dst = append(dst, `{"absent":{`...)
	dst = append(dst, st.absent...)
	dst = append(dst, '}')
	wholeBody := len(f.intent) == 0
	if wholeBody && len(st.intent) > 0 {
		dst = append(dst, ',')
		dst = append(dst, st.intent...)
	}
	dst = append(dst, `,"headers":{`...)
	first := true
	for _, h := range f.headers {
		vals, ok := lookupHeader(r.Header, h)
		if !ok {
			return dst[:n], &RequestError{Part: "header", Name: h.lower, Err: &detail{ErrInvalidRequest, "several header keys differ only in case"}}
		}
		if len(vals) == 0 {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst, _ = canonical.AppendString(dst, h.lower) // a token: ASCII
		dst = append(dst, ':')
		if dst, err = appendValues(dst, vals); err != nil {
			return dst[:n], &RequestError{Part: "header", Name: h.lower, Err: &detail{ErrInvalidRequest, "value is not valid UTF-8"}}
		}
	}
	dst = append(dst, '}')
	if !wholeBody {
		dst = append(dst, ',')
		dst = append(dst, st.intent...)
	}
	dst = append(dst, `,"method":`...)
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	if dst, err = canonical.AppendString(dst, method); err != nil {
		return dst[:n], &RequestError{Part: "method", Err: &detail{ErrInvalidRequest, "not valid UTF-8"}}
	}
	dst = append(dst, `,"path":`...)
	if dst, err = canonical.AppendString(dst, r.Path); err != nil {
		return dst[:n], &RequestError{Part: "path", Err: &detail{ErrInvalidRequest, "not valid UTF-8"}}
	}
	dst = append(dst, `,"query":{`...)
	first = true
	for _, name := range f.query {
		vals := r.Query[name]
		if len(vals) == 0 {
			continue // absent, as a header without values is
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst, _ = canonical.AppendString(dst, name) // checked by Compile
		dst = append(dst, ':')
		if dst, err = appendValues(dst, vals); err != nil {
			return dst[:n], &RequestError{Part: "query", Name: name, Err: &detail{ErrInvalidRequest, "value is not valid UTF-8"}}
		}
	}
	return append(dst, '}', '}'), nil
}

// lookupHeader returns the values of h. A map built by net/http holds the
// canonical key only, but a hand-built one may hold several spellings of one
// name; then the result would depend on which one is read, so that is an
// error (false).
func lookupHeader(hdr http.Header, h header) ([]string, bool) {
	var found []string
	n := 0
	for k, v := range hdr {
		if len(k) == len(h.lower) && strings.EqualFold(k, h.lower) {
			found = v
			n++
		}
	}
	return found, n <= 1
}

func appendValues(dst []byte, vals []string) ([]byte, error) {
	dst = append(dst, '[')
	for i, v := range vals {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = canonical.AppendString(dst, v); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// selectIntent fills st.intent with the "body" or "intent" member (empty
// when there is no body in whole-body mode) and st.absent with the holes:
// for each intent path that did not match everywhere, the concrete paths
// that matched nothing.
func (f *Fingerprinter) selectIntent(st *state) error {
	body := unsafeString(st.body)
	st.absent = st.absent[:0]
	st.intent = st.intent[:0]
	all := uint64(1)<<len(f.ignorePaths) - 1
	if len(f.intent) == 0 {
		for i := range f.required {
			p := &f.required[i]
			st.holes, st.where = -1, st.where[:0]
			ok := len(body) > 0
			if ok {
				st.intent, ok = f.eval(st.intent[:0], st, body, p, 0, 0)
			}
			if !ok {
				return missing(p.text)
			}
			if st.holes == -2 {
				return missing(string(st.first))
			}
		}
		st.intent = st.intent[:0]
		if len(body) > 0 {
			st.intent = append(st.intent, `"body":`...)
			st.intent, _ = f.filter(st.intent, body, 0, 0, all)
		}
		return nil
	}
	st.intent = append(st.intent, `"intent":{`...)
	n := 0
	for i := range f.intent {
		p := &f.intent[i]
		mark := len(st.intent)
		if n > 0 {
			st.intent = append(st.intent, ',')
		}
		st.intent, _ = canonical.AppendString(st.intent, p.text) // checked by Compile
		st.intent = append(st.intent, ':')
		st.holes, st.where = 0, st.where[:0]
		ok := len(body) > 0
		if ok {
			st.intent, ok = f.eval(st.intent, st, body, p, 0, all)
		}
		if ok {
			n++
		} else {
			st.intent = st.intent[:mark]
			f.addHole(st, p, 0)
		}
		if p.required && st.holes > 0 {
			if !ok {
				return missing(p.text)
			}
			return missing(string(st.first))
		}
		if st.holes > 0 {
			st.absent = append(st.absent, ']')
		}
	}
	st.intent = append(st.intent, '}')
	return nil
}

func missing(where string) error {
	return &RequestError{Part: "body", Name: where, Err: ErrMissingRequired}
}

// addHole records that p matched nothing below the concrete path st.where,
// which has d segments. When st.holes is negative it only keeps the first
// hole (-1: none yet, -2: kept).
func (f *Fingerprinter) addHole(st *state, p *path, d int) {
	st.tmp = append(st.tmp[:0], st.where...)
	st.tmp = appendRest(st.tmp, p, d)
	if st.holes < 0 {
		if st.holes == -1 {
			st.first = append(st.first[:0], st.tmp...)
			st.holes = -2
		}
		return
	}
	if st.holes == 0 {
		if len(st.absent) > 0 {
			st.absent = append(st.absent, ',')
		}
		st.absent, _ = canonical.AppendString(st.absent, p.text) // checked by Compile
		st.absent = append(st.absent, ':', '[')
		st.first = append(st.first[:0], st.tmp...)
	} else {
		st.absent = append(st.absent, ',')
	}
	st.absent, _ = canonical.AppendString(st.absent, unsafeString(st.tmp)) // path text: UTF-8
	st.holes++
}

// appendRest appends the segments of p from d on, joined by dots.
func appendRest(dst []byte, p *path, d int) []byte {
	for ; d < len(p.segs); d++ {
		if len(dst) > 0 {
			dst = append(dst, '.')
		}
		dst = append(dst, p.segs[d].key...)
	}
	return dst
}

// eval appends the value that p selects from val, whose concrete path has d
// segments, and reports whether it matched. mask holds the Ignore paths that
// match the concrete path so far.
func (f *Fingerprinter) eval(dst []byte, st *state, val string, p *path, d int, mask uint64) ([]byte, bool) {
	if d == len(p.segs) {
		dst, _ = f.filter(dst, val, 0, d, mask)
		return dst, true
	}
	seg := &p.segs[d]
	isArray := val[0] == '['
	whereLen := len(st.where)
	if seg.all {
		if !isArray {
			return dst, false
		}
		dst = append(dst, '[')
		n, idx := 0, 0
		gjson.Parse(val).ForEach(func(_, v gjson.Result) bool {
			st.where = appendIndex(st.where[:whereLen], idx)
			mark := len(dst)
			if n > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			next, _ := f.advance(mask, d, "", idx)
			if dst, ok = f.eval(dst, st, v.Raw, p, d+1, next); ok {
				n++
			} else {
				dst = dst[:mark]
				f.addHole(st, p, d+1)
			}
			idx++
			return true
		})
		st.where = st.where[:whereLen]
		return append(dst, ']'), true
	}
	// A name selects from an object and an index from an array; gjson
	// would also search inside a string, which is a value, not a container.
	if isArray && seg.index < 0 || !isArray && val[0] != '{' {
		return dst, false
	}
	r := gjson.Get(val, seg.key)
	if !r.Exists() {
		return dst, false
	}
	var next uint64
	if isArray {
		next, _ = f.advance(mask, d, "", seg.index)
	} else {
		next, _ = f.advance(mask, d, seg.name, -1)
	}
	if whereLen > 0 {
		st.where = append(st.where, '.')
	}
	st.where = append(st.where, seg.key...)
	dst, ok := f.eval(dst, st, r.Raw, p, d+1, next)
	st.where = st.where[:whereLen]
	return dst, ok
}

func appendIndex(dst []byte, i int) []byte {
	if len(dst) > 0 {
		dst = append(dst, '.')
	}
	return strconv.AppendInt(dst, int64(i), 10)
}

// advance returns the Ignore paths of mask that still match after one more
// step, a member name (canonically escaped) or, when idx >= 0, an array
// index, at depth d; drop reports that one of them ends there.
func (f *Fingerprinter) advance(mask uint64, d int, name string, idx int) (next uint64, drop bool) {
	for m := mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		q := &f.ignorePaths[b]
		s := &q.segs[d]
		var match bool
		if idx >= 0 {
			match = s.all || s.index == idx
		} else {
			match = !s.all && s.name == name
		}
		if !match {
			continue
		}
		if len(q.segs) == d+1 {
			drop = true
		} else {
			next |= 1 << b
		}
	}
	return next, drop
}

// filter appends the canonical value at s[i], whose path has depth d, less
// the members that Ignore removes, and returns the offset past the value.
func (f *Fingerprinter) filter(dst []byte, s string, i, d int, mask uint64) ([]byte, int) {
	if mask == 0 && len(f.ignoreNames) == 0 {
		j := skipValue(s, i)
		return append(dst, s[i:j]...), j
	}
	switch s[i] {
	case '{':
		dst = append(dst, '{')
		i++
		n := 0
		for s[i] != '}' {
			nameEnd := skipString(s, i)
			name := s[i+1 : nameEnd-1]
			next, drop := f.advance(mask, d, name, -1)
			if drop || f.ignoredName(name) {
				i = skipValue(s, nameEnd+1)
			} else {
				if n > 0 {
					dst = append(dst, ',')
				}
				n++
				dst = append(dst, s[i:nameEnd+1]...)
				dst, i = f.filter(dst, s, nameEnd+1, d+1, next)
			}
			if s[i] == ',' {
				i++
			}
		}
		return append(dst, '}'), i + 1
	case '[':
		dst = append(dst, '[')
		i++
		for idx := 0; s[i] != ']'; idx++ {
			if idx > 0 {
				dst = append(dst, ',')
			}
			next, _ := f.advance(mask, d, "", idx)
			dst, i = f.filter(dst, s, i, d+1, next)
			if s[i] == ',' {
				i++
			}
		}
		return append(dst, ']'), i + 1
	}
	j := skipValue(s, i)
	return append(dst, s[i:j]...), j
}

func (f *Fingerprinter) ignoredName(name string) bool {
	for _, n := range f.ignoreNames {
		if n == name {
			return true
		}
	}
	return false
}

// skipValue returns the offset just past the value at s[i] of a canonical
// (valid, compact) JSON text.
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		return skipString(s, i)
	case '{', '[':
		depth := 0
		for ; i < len(s); i++ {
			switch s[i] {
			case '"':
				i = skipString(s, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(s) && s[i] != ',' && s[i] != '}' && s[i] != ']' {
		i++
	}
	return i
}

// skipString returns the offset just past the string at s[i].
func skipString(s string, i int) int {
	for i++; ; i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
