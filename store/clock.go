package store

import (
	"sync/atomic"
	"time"
)

// processClock reads this process's clock as time.Now does, for about
// half the cost: it reads the whole clock (wall and monotonic) at most
// once a period, and in between adds the monotonic time elapsed since to
// that reading. A Memory reads the time at each operation, and a full
// reading is two calls into the kernel's clock where the monotonic one
// alone is one.
//
// Its readings carry a monotonic reading, as time.Now's, and their wall
// time is time.Now's but for a step of the wall clock (a jump set by
// hand or by NTP), which it follows within a period. The monotonic clock
// is slewed with the wall clock, so between steps the two agree.
type processClock struct {
	base   atomic.Pointer[time.Time] // the last full reading
	period time.Duration
}

// newProcessClock returns a clock that reads the whole clock once a
// second at most.
func newProcessClock() *processClock { return &processClock{period: time.Second} }

// now returns the time now.
func (c *processClock) now() time.Time {
	if b := c.base.Load(); b != nil {
		if since := time.Since(*b); since >= 0 && since < c.period {
			return b.Add(since)
		}
	}
	t := time.Now()
	c.base.Store(&t) // an allocation a period at most
	return t
}
