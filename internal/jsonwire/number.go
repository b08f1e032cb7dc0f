package jsonwire

import (
	"math"
	"strconv"
	"unsafe"
)

// maxExponent bounds the decimal exponent of a number in Exact mode, so a
// hostile literal cannot ask for an unbounded layout.
const maxExponent = 999_999_999

// appendNumber reads the number starting at src[start] and appends its
// canonical form. It returns the offset just past the number.
func (e *encoder) appendNumber(dst, src []byte, start int) ([]byte, int, error) {
	i := start
	neg := src[i] == '-'
	if neg {
		i++
	}
	intStart := i
	switch {
	case i >= len(src):
		return dst, i, e.eof(dst, src)
	case src[i] == '0':
		i++
		if i < len(src) && isDigit(src[i]) {
			return dst, i, e.fail(dst, start, ErrSyntax, "number "+QuoteExcerpt(token(src[start:]))+" has a leading zero")
		}
	case isDigit(src[i]):
		for i++; i < len(src) && isDigit(src[i]); i++ {
		}
	default:
		return dst, i, e.fail(dst, start, ErrSyntax, "invalid number "+QuoteExcerpt(src[start:i+1]))
	}
	intDigits := src[intStart:i]
	var fracDigits []byte
	if i < len(src) && src[i] == '.' {
		i++
		f := i
		for i < len(src) && isDigit(src[i]) {
			i++
		}
		if i == f {
			if i >= len(src) {
				return dst, i, e.eof(dst, src)
			}
			return dst, i, e.fail(dst, start, ErrSyntax, "number "+QuoteExcerpt(src[start:i])+" needs a digit after the point")
		}
		fracDigits = src[f:i]
	}
	var exp int64
	if i < len(src) && src[i]|0x20 == 'e' {
		i++
		expNeg := false
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			expNeg = src[i] == '-'
			i++
		}
		f := i
		for ; i < len(src) && isDigit(src[i]); i++ {
			if exp < 1<<40 { // far beyond any bound; saturate instead of overflowing
				exp = exp*10 + int64(src[i]-'0')
			}
		}
		if i == f {
			if i >= len(src) {
				return dst, i, e.eof(dst, src)
			}
			return dst, i, e.fail(dst, start, ErrSyntax, "number "+QuoteExcerpt(src[start:i])+" needs a digit in the exponent")
		}
		if expNeg {
			exp = -exp
		}
	}

	// Reduce to significant digits D and point position n: value = 0.D × 10^n.
	n := int64(len(intDigits)) + exp
	for len(intDigits) > 0 && intDigits[0] == '0' {
		intDigits = intDigits[1:]
		n--
	}
	if len(intDigits) == 0 {
		for len(fracDigits) > 0 && fracDigits[0] == '0' {
			fracDigits = fracDigits[1:]
			n--
		}
	}
	for len(fracDigits) > 0 && fracDigits[len(fracDigits)-1] == '0' {
		fracDigits = fracDigits[:len(fracDigits)-1]
	}
	if len(fracDigits) == 0 {
		for len(intDigits) > 0 && intDigits[len(intDigits)-1] == '0' {
			intDigits = intDigits[:len(intDigits)-1]
		}
	}
	k := len(intDigits) + len(fracDigits)
	if k == 0 {
		return append(dst, '0'), i, nil // zero, including -0
	}
	if e.check && (e.opts.Numbers == Exact && n-1 <= maxExponent && n-1 >= -maxExponent ||
		e.opts.Numbers == JCS && n > -300 && n < 300) {
		return dst, i, nil // Validate: in range, and nothing to write
	}

	// A literal of at most 15 significant digits in the normal range is the
	// shortest form of its nearest double (DBL_DIG is 15), so JCS needs no
	// float conversion for it.
	if e.opts.Numbers == Exact || k <= 15 && n > -290 && n < 290 {
		if n-1 > maxExponent || n-1 < -maxExponent {
			return dst, i, e.fail(dst, start, ErrNumberRange, "number "+QuoteExcerpt(src[start:i])+" has an exponent beyond ±999999999")
		}
		var d []byte
		switch {
		case len(fracDigits) == 0:
			d = intDigits
		case len(intDigits) == 0:
			d = fracDigits
		default:
			d = append(append(e.digits[:0], intDigits...), fracDigits...)
			e.digits = d
		}
		return appendLayout(dst, neg, d, n), i, nil
	}

	f, ok := nearestDouble(intDigits, fracDigits, n)
	if !ok {
		// strconv decides, given 0.D e n: its slow path drops the integer
		// digits of a literal beyond the 800th from the exponent
		// (1 followed by 1400 zeros, e-999, came back as 1e-200).
		d := append(e.digits[:0], '0', '.')
		d = append(append(d, intDigits...), fracDigits...)
		d = append(d, 'e')
		d = strconv.AppendInt(d, n, 10)
		e.digits = d
		var err error
		if f, err = strconv.ParseFloat(unsafe.String(&d[0], len(d)), 64); err != nil && math.IsInf(f, 0) {
			f = math.Inf(1)
		}
	}
	if math.IsInf(f, 0) {
		return dst, i, e.fail(dst, start, ErrNumberRange, "number "+QuoteExcerpt(src[start:i])+" is beyond the range of a double")
	}
	if f == 0 {
		return append(dst, '0'), i, nil // underflow
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d[.ddd]e±xx
	m := 0
	for b[m] != 'e' {
		m++
	}
	x, _ := strconv.Atoi(unsafe.String(&b[m+1], len(b)-m-1))
	d := append(e.digits[:0], b[0])
	if m > 1 {
		d = append(d, b[2:m]...)
	}
	e.digits = d
	return appendLayout(dst, neg, d, int64(x)+1), i, nil
}

// nearestDouble returns the magnitude of the double nearest to 0.D × 10^n,
// where D, the significant digits of a literal, is ip followed by fp; false
// when that takes strconv.ParseFloat. The first 19 digits decide it when
// the next ones are zero or when rounding them down and up gives the same
// double.
func nearestDouble(ip, fp []byte, n int64) (float64, bool) {
	var w uint64
	k := 0
	for _, part := range [2][]byte{ip, fp} {
		for _, c := range part {
			if k == 19 {
				break
			}
			w = w*10 + uint64(c-'0')
			k++
		}
	}
	b, ok := decimalToFloat(w, n-int64(k))
	if ok && len(ip)+len(fp) > k {
		b2, ok2 := decimalToFloat(w+1, n-int64(k))
		ok = ok2 && b2 == b
	}
	return math.Float64frombits(b), ok
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// appendLayout writes the value 0.D × 10^n (D without leading or trailing
// zeros) with the layout of ECMAScript's Number::toString.
func appendLayout(dst []byte, neg bool, d []byte, n int64) []byte {
	if neg {
		dst = append(dst, '-')
	}
	k := int64(len(d))
	switch {
	case k <= n && n <= 21:
		dst = append(dst, d...)
		for ; k < n; k++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, d[:n]...)
		dst = append(dst, '.')
		dst = append(dst, d[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for z := n; z < 0; z++ {
			dst = append(dst, '0')
		}
		dst = append(dst, d...)
	default:
		dst = append(dst, d[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, d[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, n-1, 10)
	}
	return dst
}
