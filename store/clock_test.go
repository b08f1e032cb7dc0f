package store

import (
	"testing"
	"time"
)

// The process clock reads as time.Now does, monotonic reading and all,
// and takes a whole reading again once its period has passed.
func TestProcessClock(t *testing.T) {
	c := &processClock{period: 20 * time.Millisecond}
	first := c.now()
	base := c.base.Load()
	if base == nil || !base.Equal(first) {
		t.Fatalf("first reading %v, base %v: want the first to be a whole reading", first, base)
	}
	for range 1000 {
		before := time.Now()
		got := c.now()
		after := time.Now()
		if got.Round(0) == got {
			t.Fatalf("reading %v carries no monotonic reading", got)
		}
		// Compared by their monotonic readings, as time.Now's are.
		if got.Before(before) || got.After(after) {
			t.Fatalf("reading %v is not between %v and %v", got, before, after)
		}
		// And by their wall times, which agree but for a step of the
		// wall clock.
		if w := got.Round(0); w.Before(before.Round(0).Add(-time.Millisecond)) || w.After(after.Round(0).Add(time.Millisecond)) {
			t.Fatalf("wall time %v is not between %v and %v", w, before.Round(0), after.Round(0))
		}
	}
	time.Sleep(30 * time.Millisecond)
	c.now()
	if c.base.Load() == base {
		t.Error("after its period the clock kept its old whole reading")
	}
}
