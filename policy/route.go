package policy

import (
	"strings"

	"github.com/idemprint/idemprint/internal/httpsyntax"
)

// segment is one segment of a route pattern: a literal, or a parameter
// ("{name}") that matches any one non-empty path segment.
type segment struct {
	text  string // the literal, or the parameter's name
	param bool
}

// pattern is a parsed route path: the segments after the leading slash. The
// pattern "/" has no segments.
type pattern []segment

// parseRoute parses "METHOD /pattern". It returns an error wrapping ErrRoute.
func parseRoute(s string) (method string, pat pattern, err error) {
	method, path, ok := strings.Cut(s, " ")
	if !ok {
		return "", nil, errorf(ErrRoute, `invalid route %q: want "METHOD /path", such as "POST /v1/payments"`, s)
	}
	if method == "" || !httpsyntax.IsToken(method) {
		return "", nil, errorf(ErrRoute, "invalid route %q: the method is not an HTTP token", s)
	}
	if strings.ToUpper(method) != method {
		return "", nil, errorf(ErrRoute, "invalid route %q: the method must be upper case", s)
	}
	if path == "" || path[0] != '/' {
		return "", nil, errorf(ErrRoute, "invalid route %q: the path must start with a slash after exactly one space", s)
	}
	if path == "/" {
		return method, pattern{}, nil
	}
	seen := map[string]bool{}
	for _, seg := range strings.Split(path[1:], "/") {
		switch {
		case seg == "":
			return "", nil, errorf(ErrRoute, "invalid route %q: empty path segment (a router cleans \"//\" away, so no request path it hands on has one)", s)
		case seg == "." || seg == "..":
			return "", nil, errorf(ErrRoute, "invalid route %q: dot segment %q (a router cleans it away, so no request path it hands on has one)", s, seg)
		case seg[0] == '{' && seg[len(seg)-1] == '}':
			name := seg[1 : len(seg)-1]
			if !isParamName(name) {
				return "", nil, errorf(ErrRoute, "invalid route %q: parameter %q is not a name (letters, digits, underscores)", s, seg)
			}
			if seen[name] {
				return "", nil, errorf(ErrRoute, "invalid route %q: parameter {%s} appears twice", s, name)
			}
			seen[name] = true
			pat = append(pat, segment{name, true})
		default:
			for i := 0; i < len(seg); i++ {
				if !isLiteralByte(seg[i]) {
					return "", nil, errorf(ErrRoute, "invalid route %q: segment %q holds %q, which a literal segment may not (parameters are whole segments)", s, seg, seg[i])
				}
			}
			pat = append(pat, segment{seg, false})
		}
	}
	return method, pat, nil
}

// String returns the pattern as written, with parameter names.
func (p pattern) String() string { return p.format(true) }

// endpoint returns the pattern with its parameter names erased
// ("/v1/payments/{}"): two patterns that differ only in the names of their
// parameters match the same paths and name the same endpoint. "{}" never
// appears in a literal segment, so the erasure keeps distinct patterns
// distinct.
func (p pattern) endpoint() string { return p.format(false) }

func (p pattern) format(names bool) string {
	if len(p) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, s := range p {
		b.WriteByte('/')
		switch {
		case !s.param:
			b.WriteString(s.text)
		case names:
			b.WriteString("{" + s.text + "}")
		default:
			b.WriteString("{}")
		}
	}
	return b.String()
}

// match reports whether path, segment by segment, is matched by p. It does
// not allocate.
func (p pattern) match(path string) bool {
	if path == "" || path[0] != '/' {
		return false
	}
	rest := path[1:]
	if len(p) == 0 {
		return rest == ""
	}
	for i, s := range p {
		seg, tail, more := strings.Cut(rest, "/")
		if seg == "" || !s.param && seg != s.text {
			return false
		}
		if more != (i < len(p)-1) {
			return false
		}
		rest = tail
	}
	return true
}

// overlaps reports whether some path is matched by both p and q.
func (p pattern) overlaps(q pattern) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if !p[i].param && !q[i].param && p[i].text != q[i].text {
			return false
		}
	}
	return true
}

// intersect returns the pattern matching exactly the paths that both p and
// q match; p and q must overlap.
func (p pattern) intersect(q pattern) pattern {
	out := make(pattern, len(p))
	for i := range p {
		out[i] = p[i]
		if p[i].param {
			out[i] = q[i]
		}
	}
	return out
}

// within reports whether every path matched by p is matched by q.
func (p pattern) within(q pattern) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if !q[i].param && (p[i].param || p[i].text != q[i].text) {
			return false
		}
	}
	return true
}

func isParamName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isLiteralByte reports whether c may appear in a literal segment: an RFC
// 3986 pchar other than a percent escape (patterns match decoded paths).
func isLiteralByte(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	return strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0
}
