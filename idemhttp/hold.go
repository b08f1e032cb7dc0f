package idemhttp

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// holder keeps a reservation while its handler runs: the middleware's
// renewals loop renews the lease every third of it, so that a long handler
// is not taken for a dead one, and the holder writes the record that ends
// it. Renewal and the final write are serialized by mu, and each writes
// the generation after the last one written.
type holder struct {
	x      *exchange // that holds it: a renewal under way keeps it from the pool
	m      *Middleware
	rule   *policy.Rule
	ctx    context.Context // not canceled by the client leaving
	period time.Duration   // a third of the lease
	due    time.Time       // the next renewal; guarded by m.renewals.mu
	index  int             // in m.renewals.holders; guarded by m.renewals.mu
	// renewing says that a renewal goroutine was started and has not
	// finished; guarded by m.renewals.mu.
	renewing bool

	mu sync.Mutex
	// claim is the request's, in its exchange: the store's time is told
	// from it, and its Record is the reservation as last written.
	claim     *store.Claim
	unknown   *policy.Record // a renewal whose reply was lost, which may have happened
	done      bool
	overtaken bool // a renewal found the reservation taken over
	calls     int
	latency   time.Duration
}

// hold makes x's holder hold the reservation of x's claim, and registers
// it for renewals.
func (m *Middleware) hold(ctx context.Context, rule *policy.Rule, x *exchange) *holder {
	if m.local {
		ctx = context.Background() // an in-process store reads neither deadlines nor values
	} else {
		ctx = context.WithoutCancel(ctx)
	}
	h := &x.h
	h.x, h.m, h.rule, h.ctx, h.period, h.claim = x, m, rule, ctx, rule.Lease()/3, &x.claim
	m.renewals.add(h)
	return h
}

// renew extends the lease; the renewals loop calls it when it is due.
func (h *holder) renew() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.overtaken {
		return
	}
	next, err := h.rule.Renew(&h.claim.Record, h.claim.StoreTime())
	if err != nil { // the claim's Record is the engine's own reservation: cannot happen
		h.m.log.LogAttrs(h.ctx, slog.LevelError, "idemhttp: renewing a lease", slog.String("rule", h.rule.Pointer()), slog.Any("error", err))
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.period)
	start := time.Now()
	err = h.m.store.Write(ctx, next, store.Guard{})
	h.latency += time.Since(start)
	h.calls++
	cancel()
	switch {
	case err == nil:
		h.claim.Record, h.unknown = next, nil
	case errors.Is(err, store.ErrConflict) && h.adoptUnknown(h.ctx):
		// An earlier renewal did happen; the next round renews from it.
	case errors.Is(err, store.ErrConflict):
		h.overtaken = true
		h.m.log.LogAttrs(h.ctx, slog.LevelWarn, "idemhttp: reservation taken over while its handler runs; its response will not be stored",
			slog.String("rule", h.rule.Pointer()), slog.Uint64("generation", h.claim.Record.Generation))
	default: // the write may have happened; the next round tries again
		h.unknown = &next
		h.m.log.LogAttrs(h.ctx, slog.LevelWarn, "idemhttp: renewing a lease failed; retrying", slog.String("rule", h.rule.Pointer()), slog.Any("error", err))
	}
}

// stop ends renewals; a renewal under way finishes first. Without one,
// none can start once h is removed, and what the last one wrote happened
// before remove returned: h.mu is not needed.
func (h *holder) stop() {
	if !h.m.renewals.remove(h) {
		h.done = true
		return
	}
	h.mu.Lock()
	h.done = true
	h.mu.Unlock()
}

// renewals renews the leases of the requests executing under one
// Middleware. One goroutine, running while requests execute, wakes every
// tick and renews each holder whose renewal is due, in a goroutine of its
// own. A timer per request would cost every request a timer's allocation,
// start and stop, though most handlers end long before their first
// renewal. The tick is half the shortest renewal period seen, so a lease
// is renewed at most halfway through; a holder that shortens it wakes the
// loop, which may be asleep for a longer tick.
type renewals struct {
	mu      sync.Mutex
	holders []*holder // each knows its index
	tick    time.Duration
	running bool
	wake    chan struct{} // the tick got shorter
}

// minTick bounds how often the loop wakes, whatever the leases.
const minTick = 5 * time.Millisecond

func (rs *renewals) add(h *holder) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	h.due = time.Time{} // the loop sets it when it first sees h: no clock reading per request
	h.index = len(rs.holders)
	rs.holders = append(rs.holders, h)
	if rs.wake == nil {
		rs.wake = make(chan struct{}, 1)
	}
	if t := max(h.period/2, minTick); rs.tick == 0 || t < rs.tick {
		rs.tick = t
		select {
		case rs.wake <- struct{}{}:
		default: // already woken
		}
	}
	if !rs.running {
		rs.running = true
		go rs.loop()
	}
}

// remove takes h out of the holders, and reports whether a renewal of h
// is under way.
func (rs *renewals) remove(h *holder) (renewing bool) {
	rs.mu.Lock()
	last := len(rs.holders) - 1
	moved := rs.holders[last]
	rs.holders[h.index], moved.index = moved, h.index
	rs.holders[last] = nil
	rs.holders = rs.holders[:last]
	renewing = h.renewing
	rs.mu.Unlock()
	return renewing
}

// len returns the number of holders: the requests whose handler runs
// under a reservation.
func (rs *renewals) len() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.holders)
}

// idleTicks is how many empty ticks the loop waits for new holders before
// it ends.
const idleTicks = 100

func (rs *renewals) loop() {
	var due []*holder
	idle := 0
	sleep := time.NewTimer(time.Hour)
	defer sleep.Stop()
	for {
		rs.mu.Lock()
		tick := rs.tick
		if len(rs.holders) == 0 {
			if idle++; idle > idleTicks {
				rs.running = false
				rs.mu.Unlock()
				return
			}
		} else {
			idle = 0
		}
		now := time.Now()
		due = due[:0]
		for _, h := range rs.holders {
			if h.due.IsZero() {
				// h was added at most a tick ago: its first renewal is
				// due a period after that, at the latest.
				h.due = now.Add(h.period - tick)
				continue
			}
			if !now.Before(h.due) && !h.renewing {
				h.due = now.Add(h.period)
				h.x.refs.Add(1) // released by the renewal
				h.renewing = true
				due = append(due, h)
			}
		}
		rs.mu.Unlock()
		for i, h := range due {
			go func() {
				defer h.x.release()
				h.renew()
				rs.mu.Lock()
				h.renewing = false
				rs.mu.Unlock()
			}()
			due[i] = nil
		}
		sleep.Reset(tick)
		select {
		case <-sleep.C:
		case <-rs.wake:
		}
	}
}

// finish writes the record that ends the reservation, made by build from
// the reservation as last written, retrying a failed store until the
// completion timeout: a completion or a release already written is taken
// as written, so a retry after a lost reply is safe. When the write finds
// another generation because a renewal whose reply was lost did happen,
// it rebuilds the record from that renewal. It returns the record written
// and nil, an error wrapping store.ErrConflict when the reservation was
// taken over, or the last store error.
func (h *holder) finish(build func(res *policy.Record) (policy.Record, error)) (policy.Record, error) {
	ctx := h.ctx
	if !h.m.local { // an in-process store never blocks
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(h.ctx, h.m.completionTimeout)
		defer cancel()
	}
	rec, err := build(&h.claim.Record)
	if err != nil {
		return rec, err
	}
	// Retries come often enough for the record to be written within the
	// lease once the store is back: after the lease, a duplicate may take
	// the key over and execute again.
	backoff, maxBackoff := 20*time.Millisecond, min(time.Second, max(h.period/8, 20*time.Millisecond))
	for {
		var start time.Time
		if h.x.timed {
			start = time.Now()
		}
		// Each attempt has a renewal's time: one stuck behind a connection
		// that is slow to open gives way to a retry, which may find
		// another, before the lease runs out.
		actx, cancel := ctx, context.CancelFunc(nil)
		if !h.m.local {
			actx, cancel = context.WithTimeout(ctx, h.period)
		}
		err := h.m.store.Write(actx, rec, store.Guard{})
		if cancel != nil {
			cancel()
		}
		if h.x.timed {
			h.latency += time.Since(start)
		}
		h.calls++
		if errors.Is(err, store.ErrConflict) && h.adoptUnknown(ctx) {
			if rec, err = build(&h.claim.Record); err != nil {
				return rec, err
			}
			continue
		}
		if err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrInvalid) || ctx.Err() != nil {
			return rec, err
		}
		select {
		case <-ctx.Done():
			return rec, err
		case <-time.After(jitter(backoff)):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// adoptUnknown reads the reservation's record back after a conflict: if it
// is the renewal whose reply was lost, that renewal happened, and it is
// the reservation as last written. A reservation is never written again
// as a retry (the store takes an identical one for another request's), so
// this is how a holder tells its own lost renewal from a takeover. The
// caller holds h.mu, or renewals have stopped.
func (h *holder) adoptUnknown(ctx context.Context) bool {
	lost := h.unknown
	h.unknown = nil
	if lost == nil {
		return false
	}
	start := time.Now()
	rec, err := h.m.store.Read(ctx, lost.StorageKey)
	h.latency += time.Since(start)
	h.calls++
	if err != nil || rec == nil || !store.Equal(rec, lost) {
		return false
	}
	h.claim.Record = *rec
	return true
}
