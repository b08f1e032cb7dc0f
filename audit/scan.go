package audit

import (
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/idemprint/idemprint/internal/httpsyntax"
)

// scanLine reads a JSON Lines request in one pass over the line, without
// building a document: the envelope's members in order, the body skipped
// as gjson skips it (its content is checked later, by the fingerprint or
// gjson.Valid), everything else checked to be strict JSON as gjson.Valid
// checks it.
//
// It takes only lines that parseLineGJSON reads without an error, and
// returns what parseLineGJSON returns for them. It gives up (false) on
// anything else: any error, and any form it leaves to gjson (an escape in
// a name or a string, a number other than a status without sign,
// fraction or exponent, a member of another type than its own).
func scanLine(line string, raw []byte) (e entry, checkBody, ok bool) {
	sc := lineScanner{s: line}
	sc.space()
	if !sc.byte('{') {
		return e, false, false
	}
	seen := 0
	// The names and values of the headers, in order, gathered before they
	// are added to the header map in one go; on the stack for 16 headers.
	var buf [32]string
	names, values := buf[:0:16], buf[16:16:32]
	hasHeaders := false
	for {
		sc.space()
		name, ok := sc.str()
		if !ok {
			return e, false, false
		}
		bit := memberBit(name)
		if bit == 0 || seen&bit != 0 {
			return e, false, false
		}
		seen |= bit
		sc.space()
		if !sc.byte(':') {
			return e, false, false
		}
		sc.space()
		switch bit {
		case memberHeaders:
			if names, values, ok = sc.headers(names, values); !ok {
				return e, false, false
			}
			hasHeaders = true
		case memberBody:
			switch sc.peek() {
			case '{', '[':
				end, ok := squash(line, sc.i)
				if !ok {
					return e, false, false
				}
				e.body = raw[sc.i:end]
				sc.i = end
				checkBody = true
			case '"':
				v, ok := sc.str()
				if !ok {
					return e, false, false
				}
				e.body = []byte(v)
			default:
				return e, false, false
			}
		case memberStatus:
			n, ok := sc.status()
			if !ok {
				return e, false, false
			}
			e.status = n
		default:
			v, ok := sc.str()
			if !ok || !e.setString(bit, v) {
				return e, false, false
			}
		}
		sc.space()
		if sc.byte('}') {
			break
		}
		if !sc.byte(',') {
			return e, false, false
		}
	}
	sc.space()
	if sc.i != len(line) || seen&(memberTime|memberMethod|memberPath) != memberTime|memberMethod|memberPath {
		return e, false, false
	}
	e.header = make(http.Header, len(names))
	if hasHeaders && !e.addHeaders(names, values) {
		return e, false, false
	}
	return e, checkBody, true
}

// memberBit returns the bit of an envelope member, or 0.
func memberBit(name string) int {
	switch name {
	case "time":
		return memberTime
	case "method":
		return memberMethod
	case "path":
		return memberPath
	case "headers":
		return memberHeaders
	case "tenant":
		return memberTenant
	case "body":
		return memberBody
	case "status":
		return memberStatus
	case "duration":
		return memberDuration
	}
	return 0
}

// setString sets a member whose value is a string, as setMember does, and
// reports whether it has no error.
func (e *entry) setString(bit int, v string) bool {
	var err error
	switch bit {
	case memberTime:
		e.t, err = parseTime(v)
	case memberMethod:
		err = e.setMethod(v)
	case memberPath:
		err = e.setTarget(v)
	case memberTenant:
		e.tenant = v
		return v != ""
	case memberDuration:
		e.dur, err = time.ParseDuration(v)
		return err == nil && e.dur >= 0
	default:
		return false
	}
	return err == nil
}

// addHeaders adds the headers names[i]: values[i] as addHeader adds them
// one by one, with one allocation for all the value slices; it reports
// whether there is no error.
func (e *entry) addHeaders(names, values []string) bool {
	vals := make([]string, 0, len(values))
	for i, name := range names {
		v := values[i]
		if !httpsyntax.IsToken(name) {
			return false
		}
		if len(name) == 4 && (name[0]|0x20) == 'h' && (name[1]|0x20) == 'o' && (name[2]|0x20) == 's' && (name[3]|0x20) == 't' {
			if e.host != "" {
				return false
			}
			e.host = v
			continue
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		if old, ok := e.header[key]; ok {
			e.header[key] = append(old, v)
			continue
		}
		vals = append(vals, v)
		e.header[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return true
}

// lineScanner reads a line of JSON Lines.
type lineScanner struct {
	s string
	i int
}

func (sc *lineScanner) space() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

func (sc *lineScanner) peek() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// byte consumes c if it is next.
func (sc *lineScanner) byte(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// str reads a string without escapes and returns its content.
func (sc *lineScanner) str() (string, bool) {
	if !sc.byte('"') {
		return "", false
	}
	start := sc.i
	for i := start; i < len(sc.s); i++ {
		switch c := sc.s[i]; {
		case c == '"':
			sc.i = i + 1
			return sc.s[start:i], true
		case c == '\\' || c < ' ':
			return "", false
		}
	}
	return "", false
}

// status reads an integer without sign, fraction or exponent and returns
// it if it is a final status, from 200 to 599.
func (sc *lineScanner) status() (int, bool) {
	n, start := 0, sc.i
	for sc.i < len(sc.s) && '0' <= sc.s[sc.i] && sc.s[sc.i] <= '9' && sc.i-start < 4 {
		n = n*10 + int(sc.s[sc.i]-'0')
		sc.i++
	}
	if sc.i-start != 3 || n < 200 || n > 599 {
		return 0, false
	}
	switch sc.peek() {
	case '.', 'e', 'E':
		return 0, false
	}
	return n, true
}

// headers reads {"Name": "value" or ["value", ...]}, appending each
// header's name and value to names and values; it gives up on a duplicate
// name, as setHeaders reports it.
func (sc *lineScanner) headers(names, values []string) ([]string, []string, bool) {
	if !sc.byte('{') {
		return names, values, false
	}
	sc.space()
	if sc.byte('}') {
		return names, values, true
	}
	var buf [16]string
	seen := buf[:0]
	for {
		sc.space()
		name, ok := sc.str()
		if !ok {
			return names, values, false
		}
		for _, n := range seen {
			if n == name {
				return names, values, false
			}
		}
		seen = append(seen, name)
		sc.space()
		if !sc.byte(':') {
			return names, values, false
		}
		sc.space()
		if sc.byte('[') {
			// An empty array adds no value but names the header: a
			// second member of that name is a duplicate.
			sc.space()
			if !sc.byte(']') {
				for {
					sc.space()
					v, ok := sc.str()
					if !ok {
						return names, values, false
					}
					names, values = append(names, name), append(values, v)
					sc.space()
					if sc.byte(']') {
						break
					}
					if !sc.byte(',') {
						return names, values, false
					}
				}
			}
		} else {
			v, ok := sc.str()
			if !ok {
				return names, values, false
			}
			names, values = append(names, name), append(values, v)
		}
		sc.space()
		if sc.byte('}') {
			return names, values, true
		}
		if !sc.byte(',') {
			return names, values, false
		}
	}
}

// squashClass classes the bytes that squash looks at: 1 opens, 2 closes,
// 3 starts a string.
var squashClass = [256]uint8{'{': 1, '[': 1, '(': 1, '}': 2, ']': 2, ')': 2, '"': 3}

// squash returns the end of the object or array that starts at s[i], as
// gjson finds it: by counting brackets and parentheses outside strings,
// whatever else the value holds; false when it does not end in s.
func squash(s string, i int) (int, bool) {
	depth := 0
	for ; i < len(s); i++ {
		switch squashClass[s[i]] {
		case 0:
		case 1:
			depth++
		case 2:
			if depth--; depth == 0 {
				return i + 1, true
			}
		case 3:
			// The string ends at the first quote after an even run of
			// backslashes.
			start := i + 1
			for {
				q := strings.IndexByte(s[i+1:], '"')
				if q < 0 {
					return 0, false
				}
				i += 1 + q
				n := 0
				for j := i - 1; j >= start && s[j] == '\\'; j-- {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		}
	}
	return 0, false
}
