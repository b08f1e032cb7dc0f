package store

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// The index finds exactly what was added and not removed, through
// growth, wraparound at the end of the table and removals in the middle
// of clusters. Hashes are drawn from a few values with the top bits near
// the end of the table, so that probes collide, cluster and wrap.
func TestIndexAgainstMap(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var sh shard
		want := map[string]int32{}
		var free []int32
		hashOf := func(key string) uint64 {
			n, _ := strconv.Atoi(key[1:])
			return ^uint64(0) - uint64(n%5)<<58 // five homes, all near the end
		}
		for op := range 3000 {
			key := "k" + strconv.Itoa(rng.IntN(300))
			h := hashOf(key)
			slot, ok := want[key]
			switch {
			case !ok && rng.IntN(3) > 0:
				var s int32
				if len(free) > 0 {
					s, free = free[len(free)-1], free[:len(free)-1]
				} else {
					if int(sh.used) == len(sh.slots)*chunkSize {
						sh.slots = append(sh.slots, new([chunkSize]entry))
					}
					s = sh.used
					sh.used++
				}
				e := sh.entry(s)
				e.key = key
				sh.ix.add(h, s)
				want[key] = s
			case ok:
				sh.ix.remove(h, slot)
				*sh.entry(slot) = entry{}
				free = append(free, slot)
				delete(want, key)
			}
			if sh.ix.n != len(want) {
				t.Fatalf("seed %d, op %d: %d indexed, want %d", seed, op, sh.ix.n, len(want))
			}
			for k := range 300 {
				key := "k" + strconv.Itoa(k)
				got := sh.find(hashOf(key), key)
				if s, ok := want[key]; !ok && got != -1 || ok && got != s {
					t.Fatalf("seed %d, op %d: find(%s) = %d, want %d (present %v)", seed, op, key, got, s, ok)
				}
			}
		}
	}
}
