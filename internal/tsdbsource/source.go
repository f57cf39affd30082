// Package tsdbsource feeds the ledger from a Prometheus-compatible query API
// (Prometheus, VictoriaMetrics, Thanos, Mimir) instead of scraping engines:
// the TSDB's raw engine samples, with their own timestamps, go through the
// same engine adapters and the same ledger as a scrape would, so rates,
// resets, the verdict and every sink behave the same.
//
// Every step it asks, at an explicit evaluation time, for the raw samples of
// the last few seconds: one query per canonical metric for every target at
// once, plus up and scrape_duration_seconds. Targets are the series' ptd_target
// labels, with ptd_role and ptd_engine, as the generated scrape
// configuration writes them; no target list is needed.
package tsdbsource

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
	"github.com/ptdmon/ptdmon/internal/shard"
)

// Options configure a Source.
type Options struct {
	// URL is the base URL of the query API (http://prometheus:9090,
	// http://victoria-metrics:8428, a Thanos querier, Mimir's /prometheus).
	URL string
	// Interval is the step (default 1s); Timeout bounds each query attempt
	// (default 4/5 of Interval).
	Interval time.Duration
	Timeout  time.Duration
	// StepTimeout bounds one step's queries together (default Interval:
	// live, a step still running when the next is due is an outage).
	StepTimeout time.Duration
	// Lag evaluates each step at now-Lag, so that samples the TSDB has
	// not made searchable yet are read at the next step rather than missed
	// (default 2×Interval: Prometheus commits a scrape within its timeout,
	// VictoriaMetrics makes rows searchable within about a second).
	Lag time.Duration
	// Window is the ledger's W: the first step reads that much history so
	// windowed rates exist at once (default 5s).
	Window time.Duration
	// MaxResponseBytes bounds one query's response (default 64 MiB).
	MaxResponseBytes int64
	// Concurrency bounds the queries in flight (default 4).
	Concurrency int
	// KVSource restricts KV bytes to one connector, as for scraped targets.
	KVSource engine.KVSource
	// Shard keeps the targets whose instance label hashes into it.
	Shard shard.Shard
	// Histograms also reads the latency histograms (TTFT, ITL, ...) bucket
	// by bucket, for the UI's latency panels; they are most of an engine's
	// series, so a fleet leaves them to dashboards over the TSDB.
	Histograms bool
	// Forget drops a target the TSDB has not mentioned for this long
	// (default 5m); until then it shows as stale.
	Forget time.Duration
	Client *http.Client
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (o *Options) defaults() {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = o.Interval * 4 / 5
	}
	if o.StepTimeout <= 0 {
		o.StepTimeout = o.Interval
	}
	if o.Lag <= 0 {
		o.Lag = 2 * o.Interval
	}
	if o.Window <= 0 {
		o.Window = ledger.DefaultWindow
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	if o.Forget <= 0 {
		o.Forget = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Source reads one TSDB into one ledger.
type Source struct {
	opts    Options
	api     v1.API
	ledger  *ledger.Ledger
	groups  []group
	targets map[string]*target
	lastOK  time.Time // evaluation time of the last complete step
	read    atomic.Int64
}

// target is what the source keeps per discovered engine.
type target struct {
	info     engine.Target
	reader   *engine.Reader
	fed      model.Time // newest sample time given to the ledger
	lastSeen time.Time
}

// New returns a Source feeding l.
func New(l *ledger.Ledger, opts Options) (*Source, error) {
	opts.defaults()
	s := &Source{opts: opts, ledger: l, groups: metricGroups(opts.Histograms), targets: map[string]*target{}}
	a, err := newAPI(opts.URL, opts.Client, opts.MaxResponseBytes, &s.read)
	if err != nil {
		return nil, err
	}
	s.api = a
	return s, nil
}

// Run steps every Interval until ctx ends, ticking the ledger at each
// step's evaluation time.
func (s *Source) Run(ctx context.Context) {
	tk := time.NewTicker(s.opts.Interval)
	defer tk.Stop()
	for {
		s.Step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
	}
}

// Step reads one step and ticks the ledger; it returns the evaluation time.
func (s *Source) Step(ctx context.Context) time.Time {
	at := s.opts.Now().Add(-s.opts.Lag).Truncate(time.Millisecond)
	sctx, cancel := context.WithTimeout(ctx, s.opts.StepTimeout)
	defer cancel()
	began := time.Now()
	span := s.span(at)
	health, metrics, err := s.fetch(sctx, at, span)
	s.opts.Logger.Debug("TSDB step", "at", at, "span", span, "queries", len(s.groups)+1,
		"bytes", s.read.Swap(0), "took", time.Since(began), "targets", len(s.targets))
	if ctx.Err() != nil {
		return at
	}
	if err != nil {
		s.outage(at, err)
	} else {
		s.apply(at, health, metrics)
		s.lastOK = at
	}
	s.ledger.Tick(at)
	return at
}

// span is how far back a step reads: since the last complete step plus an
// interval, at least two intervals; at most W plus two, which is also what
// the first step reads. A sample is searchable within Lag of its time, so
// the step after it became searchable still covers it.
func (s *Source) span(at time.Time) time.Duration {
	slack := 2 * s.opts.Interval
	most := s.opts.Window + slack
	if s.lastOK.IsZero() {
		return most
	}
	return min(max(at.Sub(s.lastOK)+s.opts.Interval, slack), most)
}

// fetch runs the health query first, then the metric groups in parallel:
// a scrape the health query saw is then visible to every later query.
func (s *Source) fetch(ctx context.Context, at time.Time, span time.Duration) (model.Matrix, []model.Matrix, error) {
	rng := "[" + model.Duration(span).String() + "]"
	health, err := retry(ctx, s.api, healthSelector+rng, at, s.opts.Timeout)
	if err != nil {
		return nil, nil, fmt.Errorf("query %s: %w", s.opts.URL, err)
	}
	out := make([]model.Matrix, len(s.groups))
	errs := make([]error, len(s.groups))
	sem := make(chan struct{}, s.opts.Concurrency)
	var wg sync.WaitGroup
	for i, g := range s.groups {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = retry(ctx, s.api, g.selector()+rng, at, s.opts.Timeout)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			// A partial answer would show some inputs as missing rather
			// than the source as down: take none of it.
			return nil, nil, fmt.Errorf("query %s for %s: %w", s.opts.URL, s.groups[i].metric, err)
		}
	}
	return health, out, nil
}

// outage marks every known target down with the source's error: its values
// become absent, never zero.
func (s *Source) outage(at time.Time, err error) {
	s.opts.Logger.Warn("TSDB source unavailable", "url", s.opts.URL, "err", err)
	for name := range s.targets {
		s.ledger.Record(ledger.Scrape{Target: name, Time: at, Err: err, Reason: scrape.ReasonSource})
	}
}
