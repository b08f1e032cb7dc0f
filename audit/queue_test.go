package audit

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFIFO holds fifo to a slice, across block boundaries and emptyings.
func TestFIFO(t *testing.T) {
	for _, tc := range []struct {
		name     string
		pushBias float64 // the chance that a step pushes
		steps    int
	}{
		{"Growing", 0.7, 20 * fifoBlock},
		{"Steady", 0.5, 20 * fifoBlock},
		{"Draining", 0.3, 20 * fifoBlock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			var f fifo[int]
			var model []int
			next := 0
			for step := range tc.steps {
				if len(model) == 0 || rng.Float64() < tc.pushBias {
					for range 1 + rng.IntN(3) {
						f.push(next)
						model = append(model, next)
						next++
					}
				} else {
					got, want := f.pop(), model[0]
					model = model[1:]
					if got != want {
						t.Fatalf("step %d: pop = %d, want %d", step, got, want)
					}
				}
				if f.len() != len(model) {
					t.Fatalf("step %d: len = %d, want %d", step, f.len(), len(model))
				}
				if len(model) > 0 && (f.front() != model[0] || f.back() != model[len(model)-1]) {
					t.Fatalf("step %d: front, back = %d, %d, want %d, %d", step, f.front(), f.back(), model[0], model[len(model)-1])
				}
			}
		})
	}
}

// TestQueue holds queue to a sorted slice.
func TestQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	q := queue[int]{less: func(a, b int) bool { return a < b }}
	var model []int
	for step := range 10_000 {
		if len(model) == 0 || rng.IntN(2) == 0 {
			x := rng.IntN(1000)
			q.push(x)
			model = append(model, x)
			slices.Sort(model)
		} else {
			if got := q.pop(); got != model[0] {
				t.Fatalf("step %d: pop = %d, want %d", step, got, model[0])
			}
			model = model[1:]
		}
		if q.len() != len(model) || len(model) > 0 && q.first() != model[0] {
			t.Fatalf("step %d: queue out of order", step)
		}
	}
}
