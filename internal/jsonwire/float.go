package jsonwire

import (
	"math"
	"math/bits"
)

//go:generate go run gen_pow5.go

// Decimal to binary conversion for JCS mode, after D. Lemire, "Number
// Parsing at a Gigabyte per Second" (Software: Practice and Experience,
// 2021), §5 to §7 and §9, with subnormal results handled in place: a
// 64-bit significand times a 128-bit power of five decides the nearest
// double, or reports that it cannot, and then strconv.ParseFloat decides.
// strconv takes a slow path for every subnormal result and for literals of
// more than 19 significant digits whose first 19 do not settle the
// rounding; this one settles both most of the time.

const (
	mantBits  = 52
	expBias   = 1023
	infPower  = 0x7ff
	minPow10  = -342 // 10^q × w rounds to 0 below this for every w < 2^64
	maxPow10  = 308  // and to infinity above this for every w >= 1
	tieMinExp = -4   // w × 10^q can lie exactly halfway between two
	tieMaxExp = 23   // doubles only for q in [tieMinExp, tieMaxExp] (§9.1)
)

// decimalToFloat returns the double nearest to w × 10^q with round half to
// even, as bits without the sign (infPower<<52 for infinity), and false
// when the approximation cannot decide.
func decimalToFloat(w uint64, q int64) (uint64, bool) {
	if w == 0 || q < minPow10 {
		return 0, true
	}
	if q > maxPow10 {
		return infPower << mantBits, true
	}
	lz := bits.LeadingZeros64(w)
	w <<= lz
	lo, hi := productApprox(w, q)
	if lo == math.MaxUint64 && (q < -27 || q > 55) {
		// The truncated product may be one short of a carry into the
		// bits that decide the rounding.
		return 0, false
	}
	upper := int(hi >> 63)
	shift := upper + 64 - mantBits - 3
	m := hi >> shift
	p2 := power2(q) + upper - lz + expBias
	if p2 <= 0 {
		// Subnormal. No decimal w × 10^q with q this small lies exactly
		// halfway, so round half up is round to nearest.
		if -p2+1 >= 64 {
			return 0, true
		}
		m >>= -p2 + 1
		m += m & 1
		m >>= 1
		if m >= 1<<mantBits {
			return 1 << mantBits, true // rounded up to the smallest normal
		}
		return m, true
	}
	if lo <= 1 && q >= tieMinExp && q <= tieMaxExp && m&3 == 1 && m<<shift == hi {
		// Exactly halfway between two doubles: round to the even one.
		m &^= 1
	}
	m += m & 1
	m >>= 1
	if m >= 2<<mantBits {
		m = 1 << mantBits
		p2++
	}
	if p2 >= infPower {
		return infPower << mantBits, true
	}
	return uint64(p2)<<mantBits | m&^(1<<mantBits), true
}

// power2 is floor(q × log2(10)) + 63, exact for |q| <= 1650.
func power2(q int64) int {
	return int((217706*q)>>16) + 63
}

// productApprox returns the upper 128 bits of w × 5^q, taking the second
// word of the power only when the first leaves the bits below the
// significand and its rounding bit all ones.
func productApprox(w uint64, q int64) (lo, hi uint64) {
	const mask = math.MaxUint64 >> (mantBits + 3)
	p := &pow5[q-minPow10]
	hi, lo = bits.Mul64(w, p[0])
	if hi&mask == mask {
		h2, _ := bits.Mul64(w, p[1])
		var c uint64
		lo, c = bits.Add64(lo, h2, 0)
		hi += c
	}
	return lo, hi
}
