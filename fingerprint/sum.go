package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/idemprint/idemprint/canonical"
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
	f      *Fingerprinter // the Fingerprinter of the call
	body   []byte         // canonical body (whole-body mode)
	out    [][]byte       // per walked path: what it selected
	holes  [][]byte       // per walked path: quoted concrete paths it missed
	levels []int          // per open "#" level and path: elements written, mark
	where  []int          // the concrete path being walked: per segment an index, or -1 for a member
	stack  []level        // Intent paths: the values the walk is in (select.go)
	active []int          // their trie nodes
	tmp    []byte         // a hole's concrete path
	buf    []byte         // the intent document
	hash   hash.Hash      // SHA-256, restored to the state after the prefix
	sum    [sha256.Size]byte
}

var statePool = sync.Pool{New: func() any { return new(state) }}

// maxRetained keeps a pooled state from pinning the memory of one huge body.
const maxRetained = 1 << 20

func putState(st *state) {
	st.f = nil
	for _, b := range []*[]byte{&st.body, &st.tmp, &st.buf} {
		if cap(*b) > maxRetained {
			*b = nil
		}
	}
	for _, bs := range [][][]byte{st.out, st.holes} {
		for i := range bs {
			if cap(bs[i]) > maxRetained {
				bs[i] = nil
			}
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
	buf, err := f.appendDocument(st.buf[:0], st, &r)
	st.buf = buf
	if err != nil {
		return Fingerprint{}, err
	}
	return f.hash(st, buf), nil
}

// SumIntent returns what Sum and AppendIntent return for r, building the
// intent document once: the fingerprint, and dst with the intent document
// appended. On error it returns dst unchanged and the error Sum would
// return. dst grows by one allocation at most, when it is too small.
func (f *Fingerprinter) SumIntent(dst []byte, r Request) (Fingerprint, []byte, error) {
	st := statePool.Get().(*state)
	defer putState(st)
	buf, err := f.appendDocument(st.buf[:0], st, &r)
	st.buf = buf
	if err != nil {
		return Fingerprint{}, dst, err
	}
	return f.hash(st, buf), append(dst, buf...), nil
}

// hash returns the fingerprint of the intent document doc.
func (f *Fingerprinter) hash(st *state, doc []byte) Fingerprint {
	if st.hash == nil {
		st.hash = sha256.New()
	}
	if err := st.hash.(encoding.BinaryUnmarshaler).UnmarshalBinary(f.prefix); err != nil {
		panic("fingerprint: restoring a SHA-256 state: " + err.Error()) // the state came from MarshalBinary
	}
	st.hash.Write(doc)
	fp := Fingerprint{version: 1}
	copy(fp.sum[:], st.hash.Sum(st.sum[:0])) // st.sum: fp.sum would escape
	return fp
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
// body: bound it first, for example with [http.MaxBytesReader]. What counts
// is the Request that [Fingerprinter.HTTPRequest] builds: the escaped path,
// so /a%2Fb and /a/b differ; a declared Host header read from r.Host; a
// query that does not parse is an error when the Spec declares query
// parameters.
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
	req, err := f.HTTPRequest(r, body)
	if err != nil {
		return Fingerprint{}, err
	}
	return f.Sum(req)
}

// appendDocument appends the intent document. Members, in canonical order:
// absent, body (whole-body mode, when there is one), headers, intent (with
// Intent paths), method, path, query.
func (f *Fingerprinter) appendDocument(dst []byte, st *state, r *Request) ([]byte, error) {
	var err error
	st.f, st.body = f, st.body[:0]
	if len(f.intent) == 0 && len(r.Body) > 0 {
		if st.body, err = f.canon.Append(st.body, r.Body); err != nil {
			return dst, err
		}
	}
	if err := f.selectIntent(st, r.Body); err != nil {
		return dst, err
	}

	n := len(dst)
	dst = append(dst, `{"absent":{`...)
	dst = f.appendAbsent(dst, st)
	dst = append(dst, '}')
	wholeBody := len(f.intent) == 0
	if wholeBody {
		dst = f.appendSelected(dst, st)
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
		dst = f.appendSelected(dst, st)
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
