// Package service runs ptdmon's collector process: the scrape loops, the
// ledger's ticks, file_sd re-reads and the HTTP server, until its context ends.
package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	toolkit "github.com/prometheus/exporter-toolkit/web"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/record"
	"github.com/ptdmon/ptdmon/internal/scheduler"
	"github.com/ptdmon/ptdmon/internal/service/goruntime"
	"github.com/ptdmon/ptdmon/internal/web"
)

// ErrSetup is wrapped by errors of starting up (listen address, file_sd
// files, web configuration): the command exits 2 for them, as for any other
// configuration error.
var ErrSetup = errors.New("setup")

type setupError struct{ err error }

func (e setupError) Error() string   { return e.err.Error() }
func (e setupError) Unwrap() []error { return []error{e.err, ErrSetup} }

// Options are what Run needs besides the configuration.
type Options struct {
	KVRequest kvsize.Request
	Logger    *slog.Logger
	// PoolRequests are the pools' own B_request (config.PoolRequests).
	PoolRequests map[string]kvsize.Request
	// Ready, if set, receives the listening address once the server is up.
	Ready func(addr string)
	// Pprof serves Go's profiles under /debug/pprof/ (off by default: they
	// show the process's internals to whoever reaches the port).
	Pprof bool
	// Client, if set, makes the scrapes instead of scrape's own client
	// (tests give one with an in-memory transport, to run in fake time).
	Client *http.Client
	// OTLPReady, if set, receives the OTLP receiver's address once it is up.
	OTLPReady func(addr string)
	// Recorder, if set, records the run (Run opens one itself for
	// record.dir); Run closes it when it returns.
	Recorder *record.Recorder
	// Discover, if set, finds targets while Run runs (kubernetes_sd,
	// internal/kubesd): it calls update with the whole set it finds after
	// every change, until ctx ends. They join the configured targets.
	Discover func(ctx context.Context, update func([]config.Target))
	// AutoGOMAXPROCS sizes GOMAXPROCS to the targets' reads and the load,
	// AutoGOMEMLIMIT the soft memory limit to the targets; each unless
	// its environment variable is set (internal/service/goruntime).
	AutoGOMAXPROCS, AutoGOMEMLIMIT bool
}

// Run starts everything and blocks until ctx ends.
func Run(ctx context.Context, cfg *config.Config, opts Options) (err error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.WebConfigFile != "" {
		if err := toolkit.Validate(cfg.WebConfigFile); err != nil {
			return setupError{fmt.Errorf("web configuration %s: %w", cfg.WebConfigFile, err)}
		}
	}
	targets, err := resolveTargets(cfg, nil)
	if err != nil {
		return setupError{err}
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return setupError{fmt.Errorf("listen on %s: %w", cfg.Listen, err)}
	}
	if opts.Recorder == nil {
		if opts.Recorder, err = OpenRecorder(cfg, opts.KVRequest, opts.PoolRequests, log); err != nil {
			ln.Close()
			return setupError{err}
		}
	}
	if opts.Recorder != nil {
		// A recording that does not close is not on disk: Run fails.
		defer func() {
			if cerr := opts.Recorder.Close(); err == nil {
				err = cerr
			}
		}()
	}
	// The receiver stops when Run returns, whichever way.
	otlpCtx, stopOTLP := context.WithCancel(ctx)
	requests, collectors, otlpStopped, err := startOTLP(otlpCtx, cfg, opts, log)
	if err != nil {
		stopOTLP()
		ln.Close()
		return err
	}
	defer func() { stopOTLP(); <-otlpStopped }()
	prior, err := PriorOf(cfg)
	if err != nil {
		ln.Close()
		return setupError{err}
	}
	if prior != nil {
		log.Info("the advice starts from an earlier run's capacities", "from", prior.From)
	}
	p := newPipeline(ctx, cfg, targets, opts, log)
	as := &api.Server{Ledger: p.ledger, Logger: log, Extra: web.Routes(), SLO: cfg.SLO, Headroom: cfg.Headroom, Requests: requests, Health: recordHealth(opts.Recorder), AdvicePrior: prior}
	if opts.Recorder != nil {
		as.Extra["GET /api/v1/record"] = recordHandler(opts.Recorder)
	}
	as.Collectors = append(as.Collectors, collectors...)
	if opts.Pprof {
		addPprof(as.Extra)
	}
	srv := &http.Server{
		Handler:           api.AllowHosts(cfg.AllowedHosts, as.Handler()),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Event streams end at shutdown instead of holding it for the grace period.
	srv.RegisterOnShutdown(as.CloseStreams)
	errc := make(chan error, 1)
	go func() {
		webCfg := cfg.WebConfigFile
		errc <- toolkit.Serve(ln, srv, &toolkit.FlagConfig{WebConfigFile: &webCfg}, log)
	}()
	addr := ln.Addr().String()
	log.Info("ptdmon collecting", "listen", Scheme(cfg.WebConfigFile)+"://"+addr+"/", "targets", len(targets), "interval", cfg.Interval.Duration, "window", cfg.Window.Duration)
	if opts.Ready != nil {
		opts.Ready(addr)
	}
	done, err := p.start(ctx)
	if err != nil {
		srv.Close()
		return err
	}
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if srv.Shutdown(shut) != nil {
		// Shutdown waits for handlers and leaves connections still busy at
		// its deadline open: close them, so nothing outlives Run.
		_ = srv.Close()
	}
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// pipeline is the serve process without its HTTP server: the ledger, the
// scrape loops or the TSDB source, and the health and file_sd watchers.
type pipeline struct {
	cfg     *config.Config
	targets []engine.Target
	ledger  *ledger.Ledger
	sched   *scheduler.Scheduler
	sizer   *goruntime.Sizer
	kv      engine.KVSource
	log     *slog.Logger
	// discover is Options.Discover; found is what it found last.
	discover func(ctx context.Context, update func([]config.Target))
	mu       sync.Mutex
	found    []config.Target
}

// newPipeline builds the ledger and starts the scrape loops of targets.
func newPipeline(ctx context.Context, cfg *config.Config, targets []engine.Target, opts Options, log *slog.Logger) *pipeline {
	var tap ledger.Tap
	if opts.Recorder != nil {
		tap = opts.Recorder
	}
	l := ledger.New(ledger.Config{
		Interval:  cfg.Interval.Duration,
		Window:    cfg.Window.Duration,
		History:   int(cfg.History.Duration / cfg.Interval.Duration),
		MaxSeries: cfg.MaxSeries,
		KVRequest: opts.KVRequest,
		Logger:    log,

		PoolRequests: opts.PoolRequests,
		Tap:          tap,
	})
	resume(opts.Recorder, l, log)
	kv, _ := engine.ParseKVSource(cfg.KVSource)
	col := scheduler.New(l, scheduler.Options{
		Interval:        cfg.Interval.Duration,
		Timeout:         cfg.Timeout.Duration,
		MaxBodyBytes:    cfg.MaxBodyBytes,
		BodyBudget:      cfg.BodyBudgetBytes,
		FollowRedirects: cfg.FollowRedirects,
		KVSource:        kv,
		Window:          cfg.Window.Duration,
		Client:          opts.Client,
		Logger:          log,
	})
	p := &pipeline{cfg: cfg, targets: targets, ledger: l, sched: col, sizer: goruntime.New(sizing(cfg, opts)), kv: kv, log: log, discover: opts.Discover}
	p.setTargets(ctx, targets)
	return p
}

// sizing is what the runtime is sized by: the flags, the interval, and
// while serve records, the recording's TSDB head in the memory limit.
func sizing(cfg *config.Config, opts Options) goruntime.Options {
	o := goruntime.Options{Procs: opts.AutoGOMAXPROCS, Memory: opts.AutoGOMEMLIMIT, Interval: cfg.Interval.Duration}
	if opts.Recorder != nil {
		o.ExtraMemoryPerTarget = record.HeadBytesPerTarget
	}
	return o
}

// setTargets sizes the runtime for targets and gives them to the scrape
// loops.
func (p *pipeline) setTargets(ctx context.Context, targets []engine.Target) {
	p.sizer.SetTargets(len(targets))
	p.sched.SetTargets(ctx, targets)
}

// start runs the ticks (or the TSDB source) and the watchers until ctx
// ends; done is closed when the loops have stopped.
func (p *pipeline) start(ctx context.Context) (done chan struct{}, err error) {
	run, err := sourceRun(p.cfg, p.ledger, p.kv, p.log)
	if err != nil {
		return nil, err
	}
	if run == nil {
		run = p.sched.Run
	}
	done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { run(ctx) })
	wg.Go(func() { p.sizer.Run(ctx) })
	go func() { wg.Wait(); close(done) }()
	go watchHealth(ctx, p.ledger, p.log)
	if len(p.cfg.FileSD) > 0 {
		go watchFileSD(ctx, p.cfg, p.retarget)
	}
	if p.discover != nil {
		go p.discover(ctx, func(found []config.Target) {
			p.mu.Lock()
			p.found = found
			p.mu.Unlock()
			p.retarget(ctx, "discovered")
		})
	}
	return done, nil
}

// Targets are the targets cfg has serve watch at its start: its own and
// those of its file_sd files, within its shard.
func Targets(cfg *config.Config) ([]engine.Target, error) { return resolveTargets(cfg, nil) }

// retarget gives the scrape loops the configured, file_sd and discovered
// targets, if they changed; why names the change for the log.
func (p *pipeline) retarget(ctx context.Context, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ts, err := resolveTargets(p.cfg, p.found)
	if err != nil {
		// Keep the targets we have: a half-written file must not empty the set.
		p.log.Error(why+" targets refused; keeping the previous targets", "err", err)
		return
	}
	if !reflect.DeepEqual(ts, p.targets) {
		p.log.Info(why+" targets changed", "targets", len(ts))
		p.targets = ts
		p.setTargets(ctx, ts)
	}
}

// resolveTargets merges the configured targets with those of file_sd and
// those discovered.
func resolveTargets(cfg *config.Config, found []config.Target) ([]engine.Target, error) {
	all := append([]config.Target(nil), cfg.Targets...)
	if len(cfg.FileSD) > 0 {
		sd, err := config.ReadFileSD(cfg.FileSD)
		if err != nil {
			return nil, err
		}
		all = append(all, sd...)
	}
	all = append(all, found...)
	out := make([]engine.Target, 0, len(all))
	seen := map[string]bool{}
	for _, t := range all {
		if seen[t.Name] {
			return nil, fmt.Errorf("%s: target name %q is used twice", t.DefinedAt, t.Name)
		}
		seen[t.Name] = true
		if !inShard(cfg, t.URL) {
			continue
		}
		out = append(out, cfg.ResolveTarget(t))
	}
	return out, nil
}

// watchFileSD re-reads the file_sd files when they change (mtime polled).
func watchFileSD(ctx context.Context, cfg *config.Config, retarget func(context.Context, string)) {
	every := 5 * time.Second
	for _, e := range cfg.FileSD {
		if e.Refresh.Duration > 0 && e.Refresh.Duration < every {
			every = e.Refresh.Duration
		}
	}
	tk := time.NewTicker(every)
	defer tk.Stop()
	last := stamp(cfg)
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		now := stamp(cfg)
		if reflect.DeepEqual(now, last) {
			continue
		}
		last = now
		retarget(ctx, "file_sd")
	}
}

func stamp(cfg *config.Config) map[string]time.Time {
	m := map[string]time.Time{}
	for _, e := range cfg.FileSD {
		for _, pattern := range e.Files {
			files, _ := filepath.Glob(pattern)
			for _, f := range files {
				if st, err := os.Stat(f); err == nil {
					m[f] = st.ModTime()
				}
			}
		}
	}
	return m
}
