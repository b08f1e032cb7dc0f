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

// holder keeps a reservation while its handler runs: it renews the lease
// every third of it, so that a long handler is not taken for a dead one,
// and writes the record that ends it. Renewal and the final write are
// serialized by mu, and each writes the generation after the last one
// written.
type holder struct {
	m     *Middleware
	rule  *policy.Rule
	claim store.Claim
	ctx   context.Context // not canceled by the client leaving

	mu        sync.Mutex
	cur       policy.Record // the reservation as last written
	timer     *time.Timer
	done      bool
	overtaken bool // a renewal found the reservation taken over
	calls     int
	latency   time.Duration
}

func (m *Middleware) hold(ctx context.Context, rule *policy.Rule, c *store.Claim) *holder {
	if _, local := m.store.(*store.Memory); local {
		ctx = context.Background() // an in-process store reads neither deadlines nor values
	} else {
		ctx = context.WithoutCancel(ctx)
	}
	h := &holder{m: m, rule: rule, claim: *c, ctx: ctx, cur: c.Record}
	h.mu.Lock() // the first renewal must see the timer
	h.timer = time.AfterFunc(rule.Lease()/3, h.renew)
	h.mu.Unlock()
	return h
}

// renew extends the lease and schedules the next renewal.
func (h *holder) renew() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.overtaken {
		return
	}
	period := h.rule.Lease() / 3
	next, err := h.rule.Renew(&h.cur, h.claim.StoreTime())
	if err != nil { // h.cur is the engine's own reservation: cannot happen
		h.m.log.LogAttrs(h.ctx, slog.LevelError, "idemhttp: renewing a lease", slog.String("rule", h.rule.Pointer()), slog.Any("error", err))
		return
	}
	ctx, cancel := context.WithTimeout(h.ctx, period)
	start := time.Now()
	err = h.m.store.Write(ctx, next, store.Guard{})
	h.latency += time.Since(start)
	h.calls++
	cancel()
	switch {
	case err == nil:
		h.cur = next
	case errors.Is(err, store.ErrConflict):
		h.overtaken = true
		h.m.log.LogAttrs(h.ctx, slog.LevelWarn, "idemhttp: reservation taken over while its handler runs; its response will not be stored",
			slog.String("rule", h.rule.Pointer()), slog.Uint64("generation", h.cur.Generation))
		return
	default:
		h.m.log.LogAttrs(h.ctx, slog.LevelWarn, "idemhttp: renewing a lease failed; retrying", slog.String("rule", h.rule.Pointer()), slog.Any("error", err))
	}
	h.timer.Reset(period)
}

// stop ends renewals; a renewal under way finishes first.
func (h *holder) stop() {
	h.mu.Lock()
	h.done = true
	h.timer.Stop()
	h.mu.Unlock()
}

// finish writes rec, the record that ends the reservation (made from
// h.cur), retrying a failed store until the completion timeout: a write
// is idempotent, so a retry after a lost reply is safe. It returns nil, an
// error wrapping store.ErrConflict when the reservation was taken over,
// or the last store error.
func (h *holder) finish(rec policy.Record) error {
	ctx := h.ctx
	if _, local := h.m.store.(*store.Memory); !local { // an in-process store never blocks
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(h.ctx, h.m.completionTimeout)
		defer cancel()
	}
	backoff := 20 * time.Millisecond
	for {
		start := time.Now()
		err := h.m.store.Write(ctx, rec, store.Guard{})
		h.latency += time.Since(start)
		h.calls++
		if err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrInvalid) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(jitter(backoff)):
		}
		backoff = min(2*backoff, time.Second)
	}
}
