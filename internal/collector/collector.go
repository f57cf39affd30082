// Package collector runs one scrape loop per target: fetch, read through the
// engine adapter, record in the ledger; and ticks the ledger every interval.
package collector

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/expo"
	"github.com/ptdmon/ptdmon/internal/iterstats"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// Target is one instance to scrape.
type Target struct {
	Name   string
	URL    string
	Role   engine.Role
	Engine engine.Engine
	// IterationStats: URL serves TensorRT-LLM's JSON iteration statistics.
	IterationStats bool
}

// Options configure the loops.
type Options struct {
	Interval     time.Duration
	Timeout      time.Duration
	MaxBodyBytes int64
	KVSource     engine.KVSource
	Client       *http.Client
	Logger       *slog.Logger
}

// Collector owns the scrape loops.
type Collector struct {
	opts   Options
	ledger *ledger.Ledger
	mu     sync.Mutex
	loops  map[string]*loop
	wg     sync.WaitGroup
}

type loop struct {
	target Target
	cancel context.CancelFunc
}

// New returns a collector feeding l.
func New(l *ledger.Ledger, opts Options) *Collector {
	if opts.Client == nil {
		opts.Client = scrape.NewClient(64)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Collector{opts: opts, ledger: l, loops: make(map[string]*loop)}
}

// SetTargets starts loops for new or changed targets and stops the loops of
// targets that are gone.
func (c *Collector) SetTargets(ctx context.Context, targets []Target) {
	infos := make([]ledger.TargetInfo, 0, len(targets))
	for _, t := range targets {
		infos = append(infos, ledger.TargetInfo{Name: t.Name, URL: t.URL, Role: t.Role, Engine: t.Engine})
	}
	c.ledger.SetTargets(infos)

	c.mu.Lock()
	defer c.mu.Unlock()
	want := make(map[string]Target, len(targets))
	for _, t := range targets {
		want[t.Name] = t
	}
	for name, lp := range c.loops {
		if t, ok := want[name]; !ok || t != lp.target {
			lp.cancel()
			delete(c.loops, name)
		}
	}
	for name, t := range want {
		if _, ok := c.loops[name]; ok {
			continue
		}
		lctx, cancel := context.WithCancel(ctx)
		c.loops[name] = &loop{target: t, cancel: cancel}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.run(lctx, t)
		}()
	}
}

// Run ticks the ledger every interval until ctx ends, then waits for the
// scrape loops to stop.
func (c *Collector) Run(ctx context.Context) {
	tk := time.NewTicker(c.opts.Interval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			c.mu.Lock()
			for _, lp := range c.loops {
				lp.cancel()
			}
			c.mu.Unlock()
			c.wg.Wait()
			return
		case now := <-tk.C:
			c.ledger.Tick(now)
		}
	}
}

// reader turns one fetched body into an observation and its sample time.
type reader interface {
	read(body []byte, contentType string, at time.Time) (*engine.Observation, time.Time, error)
}

type promReader struct{ *engine.Reader }

func (p promReader) read(body []byte, contentType string, at time.Time) (*engine.Observation, time.Time, error) {
	o, err := p.Read(body, contentType)
	return o, at, err
}

// iterReader reads TensorRT-LLM's JSON iteration statistics; their records
// carry their own time, which becomes the sample time.
type iterReader struct{ *iterstats.Reader }

func (p iterReader) read(body []byte, _ string, at time.Time) (*engine.Observation, time.Time, error) {
	o, t, err := p.Read(body, at)
	if err != nil {
		return nil, t, err
	}
	it := p.LastIteration()
	if it.N > 0 {
		i := engine.IterationLatency.GaugeIndex()
		o.Gauges[i], o.HasGauges[i] = it.Mean.Seconds(), true
		o.SchedulerMode = it.Mode
	}
	if loop, _, ok := it.Loop(); ok {
		i := engine.IterationLoop.GaugeIndex()
		o.Gauges[i], o.HasGauges[i] = loop.Seconds(), true
	}
	return o, t, nil
}

func (c *Collector) newReader(t Target) reader {
	if t.IterationStats {
		return iterReader{iterstats.NewReader(t.Role, iterstats.Options{Name: t.Name, Logger: c.opts.Logger})}
	}
	return promReader{engine.NewReader(t.Engine, t.Role, c.opts.KVSource)}
}

func (c *Collector) run(ctx context.Context, t Target) {
	f := &scrape.Fetcher{URL: t.URL, Client: c.opts.Client, Timeout: c.opts.Timeout, MaxBodyBytes: c.opts.MaxBodyBytes}
	r := c.newReader(t)
	// Spread targets over the interval so their scrapes do not all land at once.
	h := fnv.New32a()
	h.Write([]byte(t.Name))
	offset := time.Duration(h.Sum32()) % c.opts.Interval
	timer := time.NewTimer(offset)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return
	case <-timer.C:
	}
	tk := time.NewTicker(c.opts.Interval)
	defer tk.Stop()
	for {
		c.once(ctx, t, f, r)
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
	}
}

func (c *Collector) once(ctx context.Context, t Target, f *scrape.Fetcher, r reader) {
	res, err := f.Fetch(ctx)
	if ctx.Err() != nil {
		return
	}
	s := ledger.Scrape{Target: t.Name, Time: res.Time, Duration: res.Duration, Bytes: len(res.Body)}
	if err != nil {
		s.Time = time.Now()
		s.Err = err
		var se *scrape.Error
		if errors.As(err, &se) {
			s.Reason = se.Reason
		}
		c.ledger.Record(s)
		return
	}
	obs, at, err := r.read(res.Body, res.ContentType, res.Time)
	if err != nil {
		s.Err = err
		s.Reason = ReadFailureReason(err)
		c.ledger.Record(s)
		return
	}
	s.Obs = obs
	s.Time = at
	c.ledger.Record(s)
}

// ReadFailureReason classes an error of reading a fetched body, for the
// reason label of ptd_scrape_failures_total.
func ReadFailureReason(err error) string {
	switch {
	case errors.Is(err, engine.ErrRole):
		return "role"
	case errors.Is(err, engine.ErrUnusable):
		return "adapter"
	case errors.Is(err, expo.ErrNotExposition):
		return "not_exposition"
	case errors.Is(err, iterstats.ErrEmpty):
		return "iterstats_empty"
	}
	return "parse"
}
