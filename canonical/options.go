package canonical

import (
	"errors"
	"strconv"

	"github.com/idemprint/idemprint/internal/jsonwire"
)

// NumberMode chooses how numbers are written. The zero value is [JCS].
type NumberMode uint8

const (
	// JCS writes every number as the ECMAScript Number::toString of the
	// nearest IEEE-754 double, as RFC 8785 requires. A literal beyond the
	// double range is an error; one that underflows becomes 0.
	JCS NumberMode = iota
	// Exact writes every number from its own decimal digits with the layout
	// of Number::toString, so no two distinct values share a form and equal
	// values always do.
	Exact
)

// String returns "jcs" or "exact".
func (m NumberMode) String() string {
	switch m {
	case JCS:
		return "jcs"
	case Exact:
		return "exact"
	}
	return "NumberMode(" + itoa(int64(m)) + ")"
}

// MarshalText returns the mode's name as [NumberMode.String] does.
func (m NumberMode) MarshalText() ([]byte, error) {
	if m > Exact {
		return nil, errors.New("canonical: unknown number mode " + m.String())
	}
	return []byte(m.String()), nil
}

// UnmarshalText sets m from "jcs" or "exact".
func (m *NumberMode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "jcs":
		*m = JCS
	case "exact":
		*m = Exact
	default:
		return errors.New(`canonical: unknown number mode ` + jsonwire.QuoteExcerpt(b) + ` (want "jcs" or "exact")`)
	}
	return nil
}

// DefaultMaxDepth is the nesting limit used when [Options.MaxDepth] is zero.
// It matches encoding/json.
const DefaultMaxDepth = 10000

// Options configures canonicalization. The zero value is RFC 8785: JCS
// numbers, nesting up to [DefaultMaxDepth], no size limit, noncharacters
// accepted. An Options value is read-only during a call, so one value may be
// used by many goroutines at once.
type Options struct {
	// Numbers selects the number mode; the zero value is JCS.
	Numbers NumberMode
	// MaxDepth limits the nesting of arrays and objects: a document nested
	// deeper is rejected with ErrTooDeep. Zero means DefaultMaxDepth; a
	// negative value means no nesting at all (only scalars are accepted).
	MaxDepth int
	// MaxBytes rejects longer inputs with ErrTooLarge before reading them.
	// Zero or negative means no limit.
	MaxBytes int
	// RejectNoncharacters rejects the Unicode noncharacters (U+FDD0 to
	// U+FDEF and every code point ending in FFFE or FFFF), literal or
	// escaped, as I-JSON §2.1 recommends.
	RejectNoncharacters bool
}

// Append appends the canonical form of the JSON text src to dst and returns
// the extended slice. On error it returns dst unchanged in length (bytes past
// that length may have been overwritten) and an [*Error].
//
// src must not overlap the spare capacity of dst. In steady state, with a
// dst of sufficient capacity, Append does not allocate.
func (o Options) Append(dst, src []byte) ([]byte, error) {
	w, err := o.wire(src)
	if err != nil {
		return dst, err
	}
	out, err := jsonwire.Append(w, dst, src)
	if err != nil {
		return dst, fromWire(err)
	}
	return out, nil
}

// Validate reports whether Append accepts the JSON text src: it returns
// the [*Error] Append would return, or nil, without writing the canonical
// form. It reads src as Append does, so it costs less only where Append
// would write and reorder: a caller that needs the canonical form of a few
// parts of a large text can validate the whole and canonicalize just the
// parts. In steady state Validate does not allocate.
func (o Options) Validate(src []byte) error {
	w, err := o.wire(src)
	if err != nil {
		return err
	}
	return fromWire(jsonwire.Validate(w, src))
}

// wire checks the limits that apply before src is read and returns the
// encoder's options.
func (o Options) wire(src []byte) (jsonwire.Options, error) {
	if o.MaxBytes > 0 && len(src) > o.MaxBytes {
		return jsonwire.Options{}, fromWire(jsonwire.NewError(int64(o.MaxBytes), ErrTooLarge,
			"input of "+itoa(int64(len(src)))+" bytes exceeds the limit of "+itoa(int64(o.MaxBytes))))
	}
	if o.Numbers > Exact {
		return jsonwire.Options{}, fromWire(jsonwire.NewError(0, ErrSyntax, "unknown number mode "+o.Numbers.String()))
	}
	return jsonwire.Options{Numbers: jsonwire.NumberMode(o.Numbers), MaxDepth: o.maxDepth(), RejectNoncharacters: o.RejectNoncharacters}, nil
}

// Transform returns the canonical form of the JSON text src in a new slice,
// or an [*Error].
func (o Options) Transform(src []byte) ([]byte, error) {
	out, err := o.Append(make([]byte, 0, len(src)+16), src)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Append appends the RFC 8785 canonical form of the JSON text src to dst. It
// is Options{}.Append; see [Options.Append] for errors and aliasing.
func Append(dst, src []byte) ([]byte, error) { return Options{}.Append(dst, src) }

// Transform returns the RFC 8785 canonical form of the JSON text src. It is
// Options{}.Transform.
func Transform(src []byte) ([]byte, error) { return Options{}.Transform(src) }

// maxDepth returns the nesting limit MaxDepth stands for.
func (o Options) maxDepth() int {
	switch {
	case o.MaxDepth == 0:
		return DefaultMaxDepth
	case o.MaxDepth < 0:
		return 0
	}
	return o.MaxDepth
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// AppendString appends s as a canonical JSON string, quotes included, and
// returns the extended slice. It returns dst unchanged and an [*Error]
// wrapping [ErrInvalidUTF8] if s is not valid UTF-8; the error's Offset is
// the offset in s.
func AppendString(dst []byte, s string) ([]byte, error) {
	out, err := jsonwire.AppendString(dst, s)
	return out, fromWire(err)
}
