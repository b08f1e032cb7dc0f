package sidecar

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idemprint/idemprint/idemhttp"
	"github.com/idemprint/idemprint/policy"
	"github.com/idemprint/idemprint/store"
)

// ns starts the name of every series; the package documentation lists them.
const ns = "idemprint_"

type metrics struct {
	// storeOK are the store histogram's series for result ok, by op: the
	// common case, without a lookup by labels.
	storeOK [numOps]prometheus.Observer

	// series are the decision counter's and the duration histogram's
	// series by their labels, looked up by labels once each: a map
	// replaced, never changed, on a miss, so that a hit takes no lock.
	series   atomic.Pointer[map[seriesKey]*decisionSeries]
	seriesMu sync.Mutex // serializes misses

	decisions      *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	store          *prometheus.HistogramVec
	inFlight       prometheus.Gauge
	upstreamErrors *prometheus.CounterVec
}

var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// The store operations, as the op label names them.
const (
	opReserve = iota
	opWrite
	opRead
	opDelete
	numOps
)

var opNames = [numOps]string{"reserve", "write", "read", "delete"}

func newMetrics() *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ns + "decisions_total",
			Help: "Requests a rule governed, by rule, the engine's action and reason, and what the middleware did.",
		}, []string{"rule", "route", "action", "reason", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    ns + "request_duration_seconds",
			Help:    "Time from a governed request's arrival to the end of its answer and of its record's completion.",
			Buckets: latencyBuckets,
		}, []string{"rule", "outcome"}),
		store: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    ns + "store_duration_seconds",
			Help:    "Latency of the idempotency store's operations, by operation and result.",
			Buckets: latencyBuckets,
		}, []string{"op", "result"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: ns + "requests_in_flight",
			Help: "Requests the proxy is serving, governed or not.",
		}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: ns + "upstream_errors_total",
			Help: "Upstream failures: unreachable (not sent, released), outcome-unknown (sent, no answer, held), aborted (response cut off, held).",
		}, []string{"kind"}),
	}
	for op, name := range opNames {
		m.storeOK[op] = m.store.WithLabelValues(name, "ok")
	}
	return m
}

// register registers the metrics, and the middleware's gauges, with reg.
func (m *metrics) register(reg prometheus.Registerer, mw *idemhttp.Middleware) error {
	executing := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: ns + "requests_executing",
		Help: "Governed requests running under a reservation.",
	}, func() float64 { return float64(mw.Stats().Executing) })
	waiting := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: ns + "requests_waiting",
		Help: "Governed requests waiting for a reservation of their key to complete.",
	}, func() float64 { return float64(mw.Stats().Waiting) })
	for _, c := range []prometheus.Collector{m.decisions, m.duration, m.store, m.inFlight, m.upstreamErrors, executing, waiting} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// seriesKey is what the labels of a decision's series are made from.
// Rules are named by their pointer and route, not by their address, so
// that a policy reload keeps the series of the rules it keeps.
type seriesKey struct {
	rule, route string
	action      policy.Action
	reason      policy.Reason
	outcome     idemhttp.Outcome
}

// decisionSeries are the series a decision counts in.
type decisionSeries struct {
	decisions prometheus.Counter
	duration  prometheus.Observer
}

func (m *metrics) decided(ev idemhttp.Event) {
	k := seriesKey{rule: ev.Rule.Pointer(), route: ev.Rule.Route(), action: ev.Action, reason: ev.Reason, outcome: ev.Outcome}
	s := m.seriesOf(k)
	s.decisions.Inc()
	s.duration.Observe(ev.Duration.Seconds())
}

// seriesOf returns the series of k, looked up by labels on its first use.
func (m *metrics) seriesOf(k seriesKey) *decisionSeries {
	if p := m.series.Load(); p != nil {
		if s, ok := (*p)[k]; ok {
			return s
		}
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	var next map[seriesKey]*decisionSeries
	if p := m.series.Load(); p != nil {
		if s, ok := (*p)[k]; ok {
			return s
		}
		next = maps.Clone(*p)
	} else {
		next = make(map[seriesKey]*decisionSeries)
	}
	outcome := k.outcome.String()
	s := &decisionSeries{
		decisions: m.decisions.WithLabelValues(k.rule, k.route, k.action.String(), k.reason.String(), outcome),
		duration:  m.duration.WithLabelValues(k.rule, outcome),
	}
	next[k] = s
	m.series.Store(&next)
	return s
}

// measuredStore times the operations of a store.
type measuredStore struct {
	store.Store
	m *metrics
}

func (s *measuredStore) observe(op int, start time.Time, err error) {
	d := time.Since(start).Seconds()
	if err == nil {
		s.m.storeOK[op].Observe(d)
		return
	}
	s.m.store.WithLabelValues(opNames[op], resultOf(err)).Observe(d)
}

func (s *measuredStore) Reserve(ctx context.Context, r store.Reservation) (store.Outcome, error) {
	start := time.Now()
	out, err := s.Store.Reserve(ctx, r)
	s.observe(opReserve, start, err)
	return out, err
}

func (s *measuredStore) Write(ctx context.Context, rec policy.Record, g store.Guard) error {
	start := time.Now()
	err := s.Store.Write(ctx, rec, g)
	s.observe(opWrite, start, err)
	return err
}

func (s *measuredStore) Read(ctx context.Context, key string) (*policy.Record, error) {
	start := time.Now()
	rec, err := s.Store.Read(ctx, key)
	s.observe(opRead, start, err)
	return rec, err
}

func (s *measuredStore) Delete(ctx context.Context, key string) error {
	start := time.Now()
	err := s.Store.Delete(ctx, key)
	s.observe(opDelete, start, err)
	return err
}

// resultOf names a store error for the result label.
func resultOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, store.ErrConflict):
		return "conflict"
	case errors.Is(err, store.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, store.ErrFull):
		return "full"
	case errors.Is(err, store.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	return "error"
}

// Unwrap returns the measured store, so that the middleware knows an
// in-process store behind the measuring.
func (s *measuredStore) Unwrap() store.Store { return s.Store }
