// Package httpsyntax checks the pieces of HTTP syntax that the policy, the
// fingerprint spec and the audit envelope all accept: field names and
// methods, which are tokens.
package httpsyntax

// IsToken reports whether s is an RFC 9110 token (§5.6.2): one or more
// tchar, the syntax of a field name and of a method.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return true
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
