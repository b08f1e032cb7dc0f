package httpsyntax

import "testing"

func TestIsToken(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"Idempotency-Key", true},
		{"X-Api_Version.2~!#$%&'*+^`|", true},
		{"POST", true},
		{"", false},
		{"Bad Header", false},
		{"a:b", false},
		{"a\x00", false},
		{"é", false},
		{`"quoted"`, false},
		{"(x)", false},
	} {
		if got := IsToken(tc.s); got != tc.want {
			t.Errorf("IsToken(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
