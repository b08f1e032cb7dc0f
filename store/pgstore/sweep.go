package pgstore

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/idemprint/idemprint/store"
)

// Sweep implements [store.Sweeper]: one DELETE of at most limit rows whose
// life ended before the database's time, oldest first, skipping rows that
// another transaction holds locked. It is an error wrapping
// [store.ErrInvalid] when limit is not positive.
func (s *Store) Sweep(ctx context.Context, limit int) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, &store.Error{Op: "sweep", Kind: err}
	}
	if limit <= 0 {
		return 0, &store.Error{Op: "sweep", Kind: store.ErrInvalid, Err: errors.New("pgstore: the sweep's limit must be positive")}
	}
	tag, err := s.pool.Exec(ctx, s.sql.sweep, limit)
	if err != nil {
		return 0, s.fail(ctx, "sweep", "", err)
	}
	return int(tag.RowsAffected()), nil
}

// RunSweeper sweeps the table every period until ctx ends, then returns
// nil. Each round calls [Store.Sweep] with batch until it deletes fewer
// than batch rows, so a round never holds more than batch rows locked at
// once; an error ends the round and is logged to [Options].Logger, and
// the next round tries again. Run it in one goroutine of each process, or
// of one process: sweepers skip each other's rows. It is an error wrapping
// [store.ErrInvalid], without sweeping, when every or batch is not
// positive.
//
//	go s.RunSweeper(ctx, time.Minute, 1000)
func (s *Store) RunSweeper(ctx context.Context, every time.Duration, batch int) error {
	if every <= 0 || batch <= 0 {
		return &store.Error{Op: "sweep", Kind: store.ErrInvalid, Err: errors.New("pgstore: the sweeper's period and batch must be positive")}
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		for ctx.Err() == nil {
			n, err := s.Sweep(ctx, batch)
			if err != nil {
				if ctx.Err() == nil && s.logger != nil {
					s.logger.LogAttrs(ctx, slog.LevelError, "pgstore: sweep failed", slog.Any("err", err))
				}
				break
			}
			if n < batch {
				break
			}
		}
	}
}

// PurgeTenant implements [store.TenantPurger]: one DELETE by the tenant
// column, through its index, whatever the rows hold. For a tenant with
// very many records it holds their row locks until it commits.
func (s *Store) PurgeTenant(ctx context.Context, tenant string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, &store.Error{Op: "purge", Kind: err}
	}
	tag, err := s.pool.Exec(ctx, s.sql.purge, []byte(tenant))
	if err != nil {
		return 0, s.fail(ctx, "purge", "", err)
	}
	return int(tag.RowsAffected()), nil
}
