package fingerprint

import (
	"encoding/base64"
	"strings"
)

// Fingerprint identifies the intent of a request under one [Spec]. It is a
// comparable value: two requests mean the same operation exactly when their
// fingerprints are ==. The zero value is no fingerprint.
type Fingerprint struct {
	version uint8
	sum     [32]byte
}

// textPrefix starts the text form of a version 1 fingerprint.
const textPrefix = "v1:sha256:"

// textLen is the length of that text form: 43 base64url characters.
const textLen = len(textPrefix) + 43

// IsZero reports whether f is the zero value.
func (f Fingerprint) IsZero() bool { return f.version == 0 }

// String returns the text form "v1:sha256:" followed by the unpadded
// base64url SHA-256 of the preimage, or "" for the zero value.
func (f Fingerprint) String() string {
	if f.IsZero() {
		return ""
	}
	b, _ := f.AppendText(nil)
	return string(b)
}

// AppendText appends the text form of f to dst, as String returns it. The
// error is always nil.
func (f Fingerprint) AppendText(dst []byte) ([]byte, error) {
	if f.IsZero() {
		return dst, nil
	}
	dst = append(dst, textPrefix...)
	return base64.RawURLEncoding.AppendEncode(dst, f.sum[:]), nil
}

// MarshalText returns the text form of f.
func (f Fingerprint) MarshalText() ([]byte, error) { return f.AppendText(nil) }

// UnmarshalText sets f from its text form; empty text sets the zero value.
func (f *Fingerprint) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*f = Fingerprint{}
		return nil
	}
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*f = p
	return nil
}

// Parse reads the text form of a fingerprint. An unknown version or
// algorithm, a wrong length or non-canonical base64 wraps
// [ErrInvalidFingerprint].
func Parse(s string) (Fingerprint, error) {
	bad := func(msg string) (Fingerprint, error) {
		return Fingerprint{}, &detail{ErrInvalidFingerprint, msg}
	}
	if !strings.HasPrefix(s, textPrefix) {
		if i := strings.IndexByte(s, ':'); i > 0 && i < 8 && s[0] == 'v' {
			return bad("unsupported version or algorithm (want " + textPrefix + "...)")
		}
		return bad("want " + textPrefix + " followed by 43 base64url characters")
	}
	if len(s) != textLen {
		return bad("want 43 base64url characters after " + textPrefix)
	}
	var f Fingerprint
	n, err := base64.RawURLEncoding.Strict().Decode(f.sum[:], []byte(s[len(textPrefix):]))
	if err != nil || n != len(f.sum) {
		return bad("digest is not canonical unpadded base64url")
	}
	f.version = 1
	return f, nil
}
