package jsonwire

import (
	"math/big"
	"testing"
)

// TestPow5Table recomputes every entry of pow5 with math/big, by the rule
// gen_pow5.go states: 5^q normalized to 128 bits and truncated for q >= 0;
// for q < 0, 2^b / 5^-q truncated, plus one, then truncated to 128 bits,
// with b = z+127 for q >= -27 and b = 2z+128 below (z the bit length of
// 5^-q).
func TestPow5Table(t *testing.T) {
	one := big.NewInt(1)
	for q := minPow10; q <= maxPow10; q++ {
		p := new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(max(q, -q))), nil)
		var want *big.Int
		if q >= 0 {
			want = new(big.Int).Set(p)
			if n := want.BitLen(); n < 128 {
				want.Lsh(want, uint(128-n))
			} else {
				want.Rsh(want, uint(n-128))
			}
		} else {
			z := p.BitLen()
			b := 2*z + 128
			if q >= -27 {
				b = z + 127
			}
			want = new(big.Int).Lsh(one, uint(b))
			want.Div(want, p).Add(want, one)
			for want.BitLen() > 128 {
				want.Rsh(want, 1)
			}
		}
		got := new(big.Int).SetUint64(pow5[q-minPow10][0])
		got.Lsh(got, 64).Or(got, new(big.Int).SetUint64(pow5[q-minPow10][1]))
		if got.Cmp(want) != 0 || got.BitLen() != 128 {
			t.Fatalf("pow5 for q = %d: %#x, want %#x", q, got, want)
		}
	}
}
