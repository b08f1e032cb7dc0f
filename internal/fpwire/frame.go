package fpwire

import (
	"encoding/binary"
	"net/http"
	"net/url"

	"github.com/idemprint/idemprint/fingerprint"
)

// A frame is a request in the binary form that the npm package writes into
// the WebAssembly module's memory, so that the body crosses as its bytes
// rather than as an escaped JSON string. Every count and length is a
// little-endian uint32:
//
//	method   length, bytes
//	path     length, bytes
//	headers  count, then per name: length, bytes, value count, per value: length, bytes
//	query    the same
//	body     length, bytes (0: no body)
//
// Strings are passed as their bytes; a string that is not UTF-8 is
// rejected by Sum as it would be from Go.

// AppendFrame appends the frame of r to dst, for tests and for callers
// that build frames in Go. Headers and query parameters are written in
// the map's order, which does not matter to Sum.
func AppendFrame(dst []byte, r fingerprint.Request) []byte {
	str := func(s string) {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(s)))
		dst = append(dst, s...)
	}
	str(r.Method)
	str(r.Path)
	for _, m := range []map[string][]string{r.Header, r.Query} {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(m)))
		for name, vals := range m {
			str(name)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(vals)))
			for _, v := range vals {
				str(v)
			}
		}
	}
	str(string(r.Body))
	return dst
}

// frameReader reads a frame, remembering the first problem.
type frameReader struct {
	b   []byte
	off int
	err error
}

func (fr *frameReader) fail(msg string) {
	if fr.err == nil {
		fr.err = &InputError{Offset: int64(fr.off), Err: &detail{ErrInvalidInput, "frame: " + msg}}
	}
}

func (fr *frameReader) u32() int {
	if fr.err != nil {
		return 0
	}
	if len(fr.b)-fr.off < 4 {
		fr.fail("truncated")
		return 0
	}
	n := binary.LittleEndian.Uint32(fr.b[fr.off:])
	fr.off += 4
	if uint64(n) > uint64(len(fr.b)-fr.off) { // every count and length is bounded by the bytes left
		fr.fail("count or length beyond the end")
		return 0
	}
	return int(n)
}

func (fr *frameReader) bytes() []byte {
	n := fr.u32()
	if fr.err != nil {
		return nil
	}
	b := fr.b[fr.off : fr.off+n : fr.off+n]
	fr.off += n
	return b
}

func (fr *frameReader) values() map[string][]string {
	n := fr.u32()
	if n == 0 || fr.err != nil {
		return nil
	}
	m := make(map[string][]string, n)
	for range n {
		name := string(fr.bytes())
		k := fr.u32()
		vals := make([]string, 0, k)
		for range k {
			vals = append(vals, string(fr.bytes()))
		}
		if fr.err != nil {
			return nil
		}
		if _, dup := m[name]; dup {
			fr.fail("name " + name + " twice")
			return nil
		}
		m[name] = vals
	}
	return m
}

// ReadFrame reads a request frame. The Body aliases b; the strings are
// copies. A malformed frame is an [*InputError].
func ReadFrame(b []byte) (fingerprint.Request, error) {
	fr := frameReader{b: b}
	r := fingerprint.Request{Method: string(fr.bytes()), Path: string(fr.bytes())}
	r.Header = http.Header(fr.values())
	r.Query = url.Values(fr.values())
	r.Body = fr.bytes()
	if fr.err == nil && fr.off != len(b) {
		fr.fail("bytes after the body")
	}
	if fr.err != nil {
		return fingerprint.Request{}, fr.err
	}
	if len(r.Body) == 0 {
		r.Body = nil
	}
	return r, nil
}
