package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/idemprint/idemprint/store"
	"github.com/idemprint/idemprint/store/storetest"
)

// fakeClock is a store clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestMemoryConformance(t *testing.T) {
	t.Run("FakeClock", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Subject {
			clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)}
			m, err := store.NewMemory(store.MemoryOptions{Clock: clock.Now, Shards: 4})
			if err != nil {
				t.Fatal(err)
			}
			return storetest.Subject{Store: m, Advance: clock.Advance}
		})
	})
	t.Run("RealClock", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) storetest.Subject {
			m, err := store.NewMemory(store.MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return storetest.Subject{Store: m}
		})
	})
}
