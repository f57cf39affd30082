package ledger

import (
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger/history"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// DefaultInstanceBudget is the per-instance detail a ledger keeps unless
// told otherwise: the hour at 1 s for 200 instances.
const DefaultInstanceBudget = 3600 * 200

// Config sets the ledger's time constants.
type Config struct {
	Interval time.Duration // scrape interval (default 1s)
	Window   time.Duration // W of the windowed rates (default 5s)
	// StaleAfter makes a target's values absent when its newest sample is
	// older than this (default 2×Interval + 1s).
	StaleAfter time.Duration
	// History is the number of points kept (default 3600: 1 h at 1 s).
	History int
	// InstanceBudget bounds the per-instance entries kept across the history
	// (default 720,000: the hour of 3,600 points at 200 instances, about
	// 120 MiB); older points lose their per-instance detail first.
	InstanceBudget int
	// MaxSeries bounds the counter series state kept per target (default
	// 50,000); a scrape that would exceed it is rejected whole, as
	// Prometheus' sample_limit does.
	MaxSeries int
	// SeriesStaleAfter is the number of successful scrapes after which a
	// counter series that stopped appearing is forgotten (default 8).
	SeriesStaleAfter int
	// KVRequest is B_request and where it came from; 0 bytes leaves KV
	// req/s absent. The ledger holds it: KV req/s divides by it, and every
	// reader (API, /metrics, verdict, advice) takes it from the ledger.
	KVRequest kvsize.Request
	// PoolRequests are the pools' own B_request by pool name
	// (docs/pools.md); a pool without one has KVRequest only where it
	// cannot be another pool's number.
	PoolRequests map[string]kvsize.Request
	Logger       *slog.Logger
	// Tap, if set, sees the ledger's inputs in the order it takes them
	// (internal/record keeps them, so a replay gives the same points).
	Tap Tap
}

// Tap is called under the ledger's lock: it must copy what it keeps and
// must not block. s.Obs is reused by its reader once Scrape returns.
type Tap interface {
	Targets(ts []engine.Target)
	Scrape(s Scrape)
	Tick(now time.Time, p Point)
}

// DefaultWindow is W, the span of the windowed rates, unless configured
// (docs/design.md#instant-and-windowed-rates).
const DefaultWindow = 5 * time.Second

func (c *Config) defaults() {
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.StaleAfter <= 0 {
		c.StaleAfter = 2*c.Interval + time.Second
	}
	if c.History <= 0 {
		c.History = 3600
	}
	if c.InstanceBudget <= 0 {
		c.InstanceBudget = DefaultInstanceBudget
	}
	if c.MaxSeries <= 0 {
		c.MaxSeries = 50_000
	}
	if c.SeriesStaleAfter <= 0 {
		c.SeriesStaleAfter = 8
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Scrape is the outcome of one scrape of one target.
type Scrape struct {
	Target   string
	Time     time.Time     // midpoint of request start and response end
	Duration time.Duration // request start to response end
	Bytes    int
	// Samples is the number of samples the body held (successful reads).
	Samples int
	Obs     *engine.Observation // nil when the scrape failed
	Err     error
	Reason  scrape.Reason // failure class for ptd_scrape_failures_total
	// Direct says the read is the target's own exposition, read as it
	// was: a counter missing from the target's read before and present in
	// this one was made in between (engines make a labelled counter at its
	// first increment), so its first value is an increase. A TSDB's
	// rebuilt exposition can show a family late, so its reads are not
	// direct (docs/design.md#counter-resets).
	Direct bool
}

// Ledger is safe for concurrent use.
type Ledger struct {
	mu        sync.Mutex
	cfg       Config
	targets   map[string]*target
	names     []string // sorted
	removedKV float64  // adjusted KV bytes of targets no longer configured
	sawKV     bool
	hist      history.History
	subs      map[chan Point]struct{}
}

// New returns an empty ledger.
func New(cfg Config) *Ledger {
	cfg.defaults()
	return &Ledger{
		cfg:     cfg,
		targets: make(map[string]*target),
		hist:    newHistory(&cfg),
		subs:    make(map[chan Point]struct{}),
	}
}

// Config returns the ledger's effective configuration.
func (l *Ledger) Config() Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// SetKVRequest changes B_request (0 bytes unsets it).
func (l *Ledger) SetKVRequest(k kvsize.Request) {
	l.mu.Lock()
	l.cfg.KVRequest = k
	l.mu.Unlock()
}

// KVRequest returns B_request and its source; the source reads "unset" when
// there are no bytes.
func (l *Ledger) KVRequest() kvsize.Request {
	l.mu.Lock()
	k := l.cfg.KVRequest
	l.mu.Unlock()
	if k.Bytes <= 0 {
		k.Bytes, k.Basis = 0, kvsize.BasisUnset
	}
	return k
}

// SetTargets replaces the set of targets. A target that leaves keeps its KV
// bytes in the global counter, which must never decrease.
func (l *Ledger) SetTargets(infos []engine.Target) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keep := make(map[string]bool, len(infos))
	for _, in := range infos {
		keep[in.Name] = true
		if t, ok := l.targets[in.Name]; ok {
			t.info = in
			t.maxNumSeqs = parseMaxNumSeqs(in.Labels)
			continue
		}
		l.targets[in.Name] = newTarget(in, l.cfg.Interval, l.cfg.Window)
	}
	for name, t := range l.targets {
		if !keep[name] {
			l.removedKV += t.keptKV()
			delete(l.targets, name)
		}
	}
	if l.cfg.Tap != nil {
		l.cfg.Tap.Targets(infos)
	}
	l.names = l.names[:0]
	for name := range l.targets {
		l.names = append(l.names, name)
	}
	sort.Strings(l.names)
}

// Record takes one scrape's outcome.
func (l *Ledger) Record(s Scrape) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.targets[s.Target]
	if !ok {
		return
	}
	if l.cfg.Tap != nil {
		l.cfg.Tap.Scrape(s)
	}
	t.lastAttempt = s.Time
	t.lastDuration = s.Duration
	t.lastBytes = s.Bytes
	t.bytesTotal += uint64(s.Bytes)
	t.samplesTotal += uint64(s.Samples)
	if s.Obs != nil && len(t.series)+t.newSeries(s.Obs) > l.cfg.MaxSeries {
		s.Obs = nil
		s.Reason = scrape.ReasonSeriesLimit
		s.Err = fmt.Errorf("more than %d counter series (the per-target series limit)", l.cfg.MaxSeries)
	}
	if s.Obs == nil {
		t.up = false
		t.lastErr = "scrape failed"
		if s.Err != nil {
			t.lastErr = s.Err.Error()
		}
		reason := s.Reason
		if reason == "" {
			reason = scrape.ReasonOf(s.Err)
		}
		t.failures[reason]++
		return
	}
	t.up = true
	t.lastErr = ""
	t.lastSuccess = s.Time
	t.ingest(s.Time, s.Obs, s.Direct, l.cfg.Logger, uint64(l.cfg.SeriesStaleAfter))
	if t.has(engine.KVBytes) {
		l.sawKV = true
	}
}

// Subscribe returns a channel that receives every new point until cancel is
// called. A slow reader misses points rather than stalling the ledger.
func (l *Ledger) Subscribe() (<-chan Point, func()) {
	ch := make(chan Point, 4)
	l.mu.Lock()
	l.subs[ch] = struct{}{}
	l.mu.Unlock()
	return ch, func() {
		l.mu.Lock()
		if _, ok := l.subs[ch]; ok {
			delete(l.subs, ch)
			close(ch)
		}
		l.mu.Unlock()
	}
}

// Tick computes the point at now, stores it in the history and sends it to
// the subscribers.
func (l *Ledger) Tick(now time.Time) Point {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.compute(now)
	l.hist.Append(p)
	if l.cfg.Tap != nil {
		l.cfg.Tap.Tick(now, p)
	}
	for ch := range l.subs {
		select {
		case ch <- p:
		default:
		}
	}
	return p
}
