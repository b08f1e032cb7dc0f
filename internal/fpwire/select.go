package fpwire

import (
	"errors"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/idemprint/idemprint/canonical"
	"github.com/idemprint/idemprint/fingerprint"
	"github.com/idemprint/idemprint/internal/jsonwire"
)

// requestSelector reads a request in the pass that validates it
// (jsonwire.Select), for the common case: every member known and of its
// type. Anything else sets other, and ParseRequest reads the text again
// the slow way, which says what is wrong and where.
type requestSelector struct {
	r        fingerprint.Request
	depth    int
	field    byte       // the top-level member being emitted: 'm', 'p', 'b' or '6' (bodyBase64)
	values   url.Values // the headers or query being read, or nil
	name     string     // the header or parameter being read
	haveBody bool
	other    bool
}

func (s *requestSelector) Enter(name []byte, index int, first byte) (jsonwire.Action, []string) {
	if s.other {
		return jsonwire.Skip, nil
	}
	switch s.depth {
	case 0:
		if first != '{' {
			break
		}
		s.depth++
		return jsonwire.Follow, nil
	case 1:
		kind := byte(0)
		switch string(name) {
		case "method":
			kind = 'm'
		case "path":
			kind = 'p'
		case "body":
			kind = 'b'
		case "bodyBase64":
			kind = '6'
		case "headers", "query":
			if first != '{' {
				break
			}
			s.values = url.Values{}
			if name[0] == 'h' {
				s.r.Header = http.Header(s.values)
			} else {
				s.r.Query = s.values
			}
			s.depth++
			return jsonwire.Follow, nil
		}
		if kind == 0 || first != '"' || (kind == 'b' || kind == '6') && s.haveBody {
			break
		}
		s.haveBody = s.haveBody || kind == 'b' || kind == '6'
		s.field = kind
		s.depth++
		return jsonwire.Emit, nil
	case 2:
		n, ok := unescapeCanonical(nil, name)
		if first != '[' || !ok {
			break
		}
		s.name = string(n)
		s.values[s.name] = []string{}
		s.depth++
		return jsonwire.Follow, nil
	case 3:
		if first != '"' {
			break
		}
		s.field = 'v'
		s.depth++
		return jsonwire.Emit, nil
	}
	s.other = true
	return jsonwire.Skip, nil
}

func (s *requestSelector) Value(canon []byte) {
	if s.other {
		return
	}
	v, ok := unescapeCanonical(make([]byte, 0, len(canon)), canon[1:len(canon)-1])
	if !ok {
		s.other = true
		return
	}
	switch s.field {
	case 'm':
		s.r.Method = string(v)
	case 'p':
		s.r.Path = string(v)
	case 'b':
		s.r.Body = v
	case '6':
		s.other = true // decoded the slow way, which reports bad base64
	case 'v':
		s.values[s.name] = append(s.values[s.name], string(v))
	}
}

func (s *requestSelector) Leave() { s.depth-- }

// unescapeCanonical appends the text of a string in canonical form (RFC
// 8785 §3.2.2.2), without its quotes, to dst: the only escapes are \", \\,
// \b, \f, \n, \r, \t and \u00XX for other control characters. It reports
// false for anything else.
func unescapeCanonical(dst, q []byte) ([]byte, bool) {
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i+1 == len(q) {
			return dst, false
		}
		i++
		switch q[i] {
		case '"', '\\':
			dst = append(dst, q[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+4 >= len(q) || q[i+1] != '0' || q[i+2] != '0' {
				return dst, false
			}
			hi, lo := hexDigit(q[i+3]), hexDigit(q[i+4])
			if hi < 0 || lo < 0 {
				return dst, false
			}
			dst = utf8.AppendRune(dst, rune(hi<<4|lo))
			i += 4
		default:
			return dst, false
		}
	}
	return dst, true
}

func hexDigit(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// selectRequest reads src with a requestSelector. It returns false when
// the slow way must read it instead.
func selectRequest(src []byte) (fingerprint.Request, bool, error) {
	var s requestSelector
	if err := jsonwire.Select(jsonwire.Options{Numbers: jsonwire.NumberMode(strict.Numbers), MaxDepth: canonical.DefaultMaxDepth}, src, &s); err != nil {
		var we *jsonwire.Error
		if errors.As(err, &we) {
			return fingerprint.Request{}, true, &InputError{Offset: we.Offset, Pointer: we.Pointer, Err: we.Err}
		}
		return fingerprint.Request{}, false, nil
	}
	if s.other {
		return fingerprint.Request{}, false, nil
	}
	if len(s.r.Body) == 0 {
		s.r.Body = nil
	}
	if len(s.r.Header) == 0 {
		s.r.Header = nil
	}
	if len(s.r.Query) == 0 {
		s.r.Query = nil
	}
	return s.r, true, nil
}
