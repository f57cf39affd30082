// Package scheduler runs one scrape loop per target: fetch, read through the
// engine adapter, record in the ledger; and ticks the ledger every interval.
package scheduler

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/fpm"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/parse"
	"github.com/ptdmon/ptdmon/internal/scrape"
	_ "github.com/ptdmon/ptdmon/internal/trtllm/iterstats" // registers the iteration-statistics source
)

// Options configure the loops.
type Options struct {
	Interval     time.Duration
	Timeout      time.Duration
	MaxBodyBytes int64
	// BodyBudget bounds the bytes of all bodies in flight together
	// (default scrape.DefaultBodyBudget).
	BodyBudget int64
	// FollowRedirects follows redirects to other hosts and ports too.
	FollowRedirects bool
	KVSource        engine.KVSource
	// Window is the ledger's window: forward-pass busy time stays unknown
	// this long after a lost message (default a minute).
	Window time.Duration
	Client *http.Client
	Logger *slog.Logger
}

// Scheduler owns the scrape loops.
type Scheduler struct {
	opts   Options
	budget *scrape.Budget
	ledger *ledger.Ledger
	mu     sync.Mutex
	loops  map[string]*loop
	wg     sync.WaitGroup
}

type loop struct {
	target engine.Target
	cancel context.CancelFunc
}

// New returns a collector feeding l.
func New(l *ledger.Ledger, opts Options) *Scheduler {
	if opts.Client == nil {
		opts.Client = scrape.NewClientFollowing(0, opts.FollowRedirects)
	}
	if opts.BodyBudget <= 0 {
		opts.BodyBudget = scrape.DefaultBodyBudget
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Scheduler{opts: opts, budget: scrape.NewBudget(opts.BodyBudget), ledger: l, loops: make(map[string]*loop)}
}

// SetTargets starts loops for new or changed targets and stops the loops of
// targets that are gone.
func (c *Scheduler) SetTargets(ctx context.Context, targets []engine.Target) {
	c.ledger.SetTargets(targets)

	c.mu.Lock()
	defer c.mu.Unlock()
	want := make(map[string]engine.Target, len(targets))
	for _, t := range targets {
		want[t.Name] = t
	}
	for name, lp := range c.loops {
		if t, ok := want[name]; !ok || !t.Equal(lp.target) {
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
func (c *Scheduler) Run(ctx context.Context) {
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

// seriesStaleReads: a raw series absent from this many reads leaves the
// reader's cache, as Prometheus ends a series absent from a scrape. It runs
// after every read, so label values that churn cannot grow the cache.
const seriesStaleReads = 4

// exposition reads a Prometheus exposition and keeps the reader's series
// cache bounded by what the target still exports.
type exposition struct{ *engine.Reader }

func (p exposition) Read(body []byte, contentType string, at time.Time) (*engine.Observation, time.Time, error) {
	o, err := p.Reader.Read(body, contentType)
	if err != nil && p.Cached() >= p.MaxSeries {
		// The cache filled up with the series of earlier reads (churning
		// label values): empty it and read again, so that only an
		// exposition that alone exceeds the limit fails.
		p.Evict(0)
		o, err = p.Reader.Read(body, contentType)
		if err != nil && p.Cached() >= p.MaxSeries {
			err = &scrape.Error{Reason: scrape.ReasonSeriesLimit, Err: err}
		}
	}
	if err != nil {
		p.Evict(1)
	} else {
		p.Evict(seriesStaleReads)
	}
	return o, at, err
}

func (c *Scheduler) newBodyReader(t engine.Target) (engine.BodyReader, error) {
	if !t.IterationStats {
		return exposition{engine.NewReader(t.Engine, t.Role, c.opts.KVSource)}, nil
	}
	cfg := engine.BodyReaderConfig{Name: t.Name, Engine: t.Engine, Role: t.Role, KV: c.opts.KVSource, Logger: c.opts.Logger}
	cfg.Format = engine.FormatIterationStats
	if t.IterationStats {
		cfg.Format = engine.FormatIterationStats
	}
	return engine.NewBodyReader(cfg)
}

func (c *Scheduler) run(ctx context.Context, t engine.Target) {
	f := &scrape.Fetcher{URL: t.URL, Client: c.opts.Client, Timeout: c.opts.Timeout, MaxBodyBytes: c.opts.MaxBodyBytes, Budget: c.budget}
	r, err := c.newBodyReader(t)
	if err != nil {
		// Configuration is validated before; this is a build without the reader.
		c.opts.Logger.Error("no reader for target", "target", t.Name, "err", err)
		c.ledger.Record(ledger.Scrape{Target: t.Name, Time: time.Now(), Err: err, Reason: scrape.ReasonAdapter})
		return
	}
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
	feed := c.forwardPass(ctx, t)
	tk := time.NewTicker(c.opts.Interval)
	defer tk.Stop()
	for {
		c.once(ctx, t, f, r, feed)
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
	}
}

// forwardPass subscribes to the target's forward-pass metrics until ctx
// ends; nil when it lists none.
func (c *Scheduler) forwardPass(ctx context.Context, t engine.Target) *fpm.Feed {
	if len(t.ForwardPassMetrics) == 0 {
		return nil
	}
	quarantine := c.opts.Window
	if quarantine <= 0 {
		quarantine = time.Minute
	}
	feed := fpm.NewFeed(t.ForwardPassMetrics, quarantine)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fpm.Run(ctx, feed, t.ForwardPassMetrics, c.opts.Logger.With("target", t.Name))
	}()
	return feed
}

func (c *Scheduler) once(ctx context.Context, t engine.Target, f *scrape.Fetcher, r engine.BodyReader, feed *fpm.Feed) {
	res, err := f.Fetch(ctx)
	defer f.Release()
	if ctx.Err() != nil {
		return
	}
	s := ledger.Scrape{Target: t.Name, Time: res.Time, Duration: res.Duration, Bytes: len(res.Body), Direct: true}
	if err != nil {
		s.Time = time.Now()
		s.Err = err
		s.Reason = scrape.ReasonOf(err)
		c.ledger.Record(s)
		return
	}
	obs, at, err := r.Read(res.Body, res.ContentType, res.Time)
	if err != nil {
		s.Err = err
		s.Reason = ReadFailureReason(err)
		c.ledger.Record(s)
		return
	}
	if feed != nil {
		feed.AddTo(obs, at)
	}
	s.Obs = obs
	s.Samples = obs.Samples
	s.Time = at
	c.ledger.Record(s)
}

// ReadFailureReason names why a fetched body could not be read: the reason an
// error names itself (engine.ReasonError), else the engine's and the
// parser's kinds of failure.
func ReadFailureReason(err error) scrape.Reason {
	if reason, ok := engine.ErrorReason(err); ok {
		return scrape.Reason(reason)
	}
	var se *scrape.Error
	switch {
	case errors.As(err, &se):
		return se.Reason
	case errors.Is(err, engine.ErrRole):
		return scrape.ReasonRole
	case errors.Is(err, parse.ErrDuplicate):
		return scrape.ReasonDuplicate
	case errors.Is(err, engine.ErrUnusable):
		return scrape.ReasonAdapter
	case errors.Is(err, parse.ErrNotExposition):
		return scrape.ReasonNotExposition
	}
	return scrape.ReasonParse
}
