package fingerprint_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/idemprint/idemprint/fingerprint"
)

// wideSpec returns a spec of n intent paths under one member, all
// required, and n one-segment ignore entries: the widest trie node and the
// longest lists a policy of the size limit can declare.
func wideSpec(n int) fingerprint.Spec {
	var s fingerprint.Spec
	for i := 0; i < n; i++ {
		p := "f." + strconv.Itoa(i) + "x"
		s.Intent = append(s.Intent, p)
		s.Required = append(s.Required, p)
		s.Ignore = append(s.Ignore, "g"+strconv.Itoa(i))
	}
	return s
}

// BenchmarkCompile measures Compile on wide specs: its time grows with the
// number of paths, not with its square (a node's children are found by
// name, required paths by text, ignore names in a set).
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{1000, 10_000, 90_000} {
		spec := wideSpec(n)
		b.Run(fmt.Sprintf("paths=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fingerprint.Compile(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompilePaths measures Compile on a spec of n intent paths side
// by side under one member, as a generated policy may declare: four times
// the paths should cost about four times the time.
func BenchmarkCompilePaths(b *testing.B) {
	for _, n := range []int{5000, 20_000} {
		var spec fingerprint.Spec
		for i := range n {
			spec.Intent = append(spec.Intent, "f."+strconv.Itoa(i)+"x")
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fingerprint.Compile(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
