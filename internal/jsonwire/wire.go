package jsonwire

import "strconv"

// NumberMode chooses how numbers are written; package canonical documents
// the two modes.
type NumberMode uint8

const (
	JCS NumberMode = iota
	Exact
)

// Options configures one run of the encoder. MaxDepth is the resolved
// nesting limit: 0 accepts scalars only.
type Options struct {
	Numbers             NumberMode
	MaxDepth            int
	RejectNoncharacters bool
}

// Append appends the canonical form of the JSON text src to dst. On error
// it returns dst unchanged in length and an *Error. src must not overlap
// the spare capacity of dst.
func Append(o Options, dst, src []byte) ([]byte, error) {
	n := len(dst)
	e := getEncoder(o)
	out, err := e.run(dst, src)
	putEncoder(e)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// Validate returns the *Error that Append would return for src, or nil,
// without writing the canonical form.
func Validate(o Options, src []byte) error {
	e := getEncoder(o)
	e.check = true
	var err error
	e.names, err = e.run(e.names[:0], src)
	putEncoder(e)
	return err
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
