package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// Options tune how a Cluster runs; the zero value is usable.
type Options struct {
	Seed       int64
	ListenHost string           // default 127.0.0.1
	Clock      func() time.Time // default time.Now
	// Speed is simulated seconds per wall-clock second (default 1). At 1 the
	// simulated instant of a scrape is exactly its wall-clock instant.
	Speed  float64
	Logger *slog.Logger // default slog.Default()
	// Tick is how often restarts are applied to listeners (default 50ms).
	Tick time.Duration
	// SteadyClockOffsets are TensorRT-LLM workers' steady clocks minus the
	// disagg server's, by instance name (default 0): the ctx/gen times of
	// WritePerfRecords are shifted by them, and WriteClockSync's probes
	// measure them.
	SteadyClockOffsets map[string]time.Duration
	// WallClockOffsets shift the host wall clock of TensorRT-LLM instances,
	// by instance name: the `timestamp` of their JSON iteration stats.
	WallClockOffsets map[string]time.Duration
	// ForwardPassMetrics: vLLM and SGLang engines publish forward-pass
	// metrics over ZeroMQ, as with --forward-pass-metrics-port
	// (forwardpass.go); Targets lists the endpoints.
	ForwardPassMetrics bool
}

// Cluster runs a Model behind one HTTP server per instance plus a control
// server with the ground truth.
type Cluster struct {
	mu      sync.Mutex
	model   *Model
	opts    Options
	log     *slog.Logger
	start   time.Time
	insts   []*liveInstance
	control *http.Server
	ctlURL  string
	done    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	bufs    sync.Pool
	fpm     []*fpmPublisher
}

type liveInstance struct {
	info   InstanceInfo
	addr   string // host:port, fixed for the cluster's life
	srv    *http.Server
	faulty bool
	rng    *rand.Rand // fault draws, under Cluster.mu
}

// Start builds the model and starts serving. Cancelling ctx closes the
// cluster, as does Close.
func Start(ctx context.Context, sc Scenario, opts Options) (*Cluster, error) {
	if opts.ListenHost == "" {
		opts.ListenHost = "127.0.0.1"
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Speed <= 0 {
		opts.Speed = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Tick <= 0 {
		opts.Tick = 50 * time.Millisecond
	}
	start := opts.Clock()
	m, err := NewModel(sc, opts.Seed, start)
	if err != nil {
		return nil, err
	}
	c := &Cluster{model: m, opts: opts, log: opts.Logger, start: start, done: make(chan struct{})}
	for name, off := range opts.WallClockOffsets {
		m.setTRTLLMWallOffset(name, off)
	}
	faultSet := map[string]bool{}
	for _, n := range sc.Faults.Instances {
		faultSet[n] = true
	}
	hasFaults := sc.Faults.TimeoutProb+sc.Faults.MalformedProb > 0
	for i, info := range m.Instances() {
		ln, err := net.Listen("tcp", net.JoinHostPort(opts.ListenHost, "0"))
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("listen for %s: %w", info.Name, err)
		}
		li := &liveInstance{
			info:   info,
			addr:   ln.Addr().String(),
			faulty: hasFaults && (len(faultSet) == 0 || faultSet[info.Name]),
			rng:    rand.New(rand.NewPCG(uint64(opts.Seed), uint64(i)+1)),
		}
		c.insts = append(c.insts, li)
		c.serve(li, ln)
	}
	if opts.ForwardPassMetrics {
		if err := c.startForwardPass(opts.ListenHost); err != nil {
			c.Close()
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(opts.ListenHost, "0"))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("listen for control: %w", err)
	}
	c.ctlURL = "http://" + ln.Addr().String()
	c.control = &http.Server{Handler: c.trtllmControl(c.controlHandler()), ReadHeaderTimeout: 5 * time.Second}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := c.control.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error("sim control server", "err", err)
		}
	}()
	c.wg.Add(1)
	go c.run(ctx)
	return c, nil
}

func (c *Cluster) serve(li *liveInstance, ln net.Listener) {
	mux := http.NewServeMux()
	prof := c.model.profileOf(li.info.Name)
	mux.HandleFunc("GET "+prof.metricsPath(), func(w http.ResponseWriter, r *http.Request) { c.serveMetrics(li, w, r) })
	if prof != nil && prof.IterationStats {
		// trtllm-serve: JSON iteration stats (drained on read) at /metrics.
		mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) { c.serveIterStats(li, w, r) })
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	li.srv = srv
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.log.Error("sim instance server", "instance", li.info.Name, "err", err)
		}
	}()
}

// offset maps a wall-clock instant to simulated time.
func (c *Cluster) offset(t time.Time) time.Duration {
	d := t.Sub(c.start)
	if d < 0 {
		return 0
	}
	if c.opts.Speed == 1 {
		return d
	}
	return time.Duration(float64(d) * c.opts.Speed)
}

func (c *Cluster) wall(d time.Duration) time.Time {
	if c.opts.Speed == 1 {
		return c.start.Add(d)
	}
	return c.start.Add(time.Duration(float64(d) / c.opts.Speed))
}

// run applies modelled restarts to the listeners: a down instance refuses
// connections, and comes back on the same port.
func (c *Cluster) run(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(c.opts.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			go c.Close() // Close waits for this goroutine
			return
		case <-c.done:
			return
		case <-t.C:
			c.reconcile()
		}
	}
}

func (c *Cluster) reconcile() {
	c.mu.Lock()
	select {
	case <-c.done:
		// Closing: Close took the servers away, which is no restart.
		c.mu.Unlock()
		return
	default:
	}
	now := c.opts.Clock()
	c.model.AdvanceTo(c.offset(now))
	passes := c.forwardPassMessages(now)
	type change struct {
		li   *liveInstance
		down bool
	}
	var changes []change
	for _, li := range c.insts {
		down := c.model.Down(li.info.Name)
		if down != (li.srv == nil) {
			changes = append(changes, change{li, down})
		}
	}
	c.mu.Unlock()
	c.sendForwardPass(passes)
	for _, ch := range changes {
		if ch.down {
			c.log.Info("sim instance down", "instance", ch.li.info.Name)
			c.mu.Lock()
			srv := ch.li.srv
			ch.li.srv = nil
			c.mu.Unlock()
			srv.Close()
			continue
		}
		ln, err := net.Listen("tcp", ch.li.addr)
		if err != nil {
			c.log.Warn("sim instance cannot rebind, retrying", "instance", ch.li.info.Name, "err", err)
			continue
		}
		c.mu.Lock()
		select {
		case <-c.done: // closing: do not start a server Close would miss
			c.mu.Unlock()
			ln.Close()
			return
		default:
		}
		c.log.Info("sim instance up", "instance", ch.li.info.Name)
		c.serve(ch.li, ln)
		c.mu.Unlock()
	}
}

type faultKind int

const (
	faultNone faultKind = iota
	faultTimeout
	faultMalformed
)

func (c *Cluster) serveMetrics(li *liveInstance, w http.ResponseWriter, r *http.Request) {
	bp, _ := c.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, 64<<10)
		bp = &b
	}
	defer c.bufs.Put(bp)

	c.mu.Lock()
	c.model.AdvanceTo(c.offset(c.opts.Clock()))
	body, f, err := c.model.Exposition(li.info.Name, (*bp)[:0])
	fault := faultNone
	if err == nil && li.faulty {
		x := li.rng.Float64()
		fs := c.model.sc.Faults
		switch {
		case x < fs.TimeoutProb:
			fault = faultTimeout
		case x < fs.TimeoutProb+fs.MalformedProb:
			fault = faultMalformed
		}
	}
	c.mu.Unlock()
	*bp = body
	if err != nil {
		// Down between a modelled restart and the listener catching up:
		// behave like a dead process, drop the connection.
		abortConn(w)
		return
	}
	switch fault {
	case faultTimeout:
		delay := c.model.sc.Faults.Delay
		if delay <= 0 {
			delay = 5 * time.Second
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
		case <-c.done:
		}
		t.Stop()
	case faultMalformed:
		body = malformed(body)
	}
	w.Header().Set("Content-Type", f.ContentType())
	_, _ = w.Write(body)
}

func abortConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// serveIterStats serves a TensorRT-LLM instance's JSON iteration stats,
// drained on read.
func (c *Cluster) serveIterStats(li *liveInstance, w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.model.AdvanceTo(c.offset(c.opts.Clock()))
	body, err := c.model.IterationStats(li.info.Name, nil)
	c.mu.Unlock()
	if err != nil {
		abortConn(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// trtllmControl adds the TensorRT-LLM endpoints to the control server:
// /perf_records.jsonl (WritePerfRecords), /clock_sync.json (WriteClockSync)
// and /usage.json (WriteUsage).
func (c *Cluster) trtllmControl(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", next)
	mux.HandleFunc("GET /perf_records.jsonl", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jsonl")
		_ = c.WritePerfRecords(w)
	})
	mux.HandleFunc("GET /clock_sync.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = c.WriteClockSync(w)
	})
	mux.HandleFunc("GET /usage.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = c.WriteUsage(w)
	})
	return mux
}

// malformed cuts the body mid-line and appends a line no Prometheus parser
// accepts, so a scraper must reject the whole scrape.
func malformed(body []byte) []byte {
	cut := len(body) * 3 / 5
	out := slices.Clip(body[:cut])
	return append(out, "{broken=\"\n"...)
}

// Targets lists the instances' scrape endpoints, at their profile's
// metrics path (TensorRT-LLM: /prometheus/metrics; its /metrics is JSON).
func (c *Cluster) Targets() []ptd.Target {
	out := make([]ptd.Target, 0, len(c.insts))
	for _, li := range c.insts {
		path := c.model.profileOf(li.info.Name).metricsPath()
		out = append(out, ptd.Target{Name: li.info.Name, URL: "http://" + li.addr + path,
			Role: ptd.Role(li.info.Role), Engine: ptd.Engine(li.info.Engine), ForwardPassMetrics: c.ForwardPassMetrics(li.info.Name)})
	}
	return out
}

// TruthURL is the control server's /truth endpoint.
func (c *Cluster) TruthURL() string { return c.ctlURL + "/truth" }

// ControlURL is the control server's base URL.
func (c *Cluster) ControlURL() string { return c.ctlURL }

// BytesPerRequest is B_request of the scenario.
func (c *Cluster) BytesPerRequest() int64 { return c.model.sc.KVBytesPerRequest }

// Scenario returns the scenario being simulated.
func (c *Cluster) Scenario() Scenario { return c.model.sc }

// Started is the wall-clock instant of simulated time 0.
func (c *Cluster) Started() time.Time { return c.start }

// TruthAt returns the exact cumulative counts at wall-clock instant t. The
// model is driven forward to t first (never beyond the clock's now: a
// future instant is answered as of now).
func (c *Cluster) TruthAt(t time.Time) Truth {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Clock()
	target := t
	if target.After(now) {
		target = now
	}
	c.model.AdvanceTo(c.offset(target))
	tr := c.model.TruthAt(c.offset(target))
	tr.At = c.wall(time.Duration(tr.SimSeconds * 1e9))
	if c.opts.Speed == 1 {
		tr.At = target
		if target.Before(c.start) {
			tr.At = c.start
		}
	}
	tr.AtUnixNano = tr.At.UnixNano()
	return tr
}

// Close stops every server. It is safe to call more than once.
func (c *Cluster) Close() error {
	c.once.Do(func() {
		close(c.done)
		c.mu.Lock()
		var srvs []*http.Server
		for _, li := range c.insts {
			if li.srv != nil {
				srvs = append(srvs, li.srv)
				li.srv = nil
			}
		}
		c.mu.Unlock()
		for _, s := range srvs {
			s.Close()
		}
		if c.control != nil {
			c.control.Close()
		}
		c.wg.Wait()
		for _, p := range c.fpm {
			p.sock.Close()
		}
	})
	return nil
}

// MaxNumSeqs is the most requests the named decode instance runs at once:
// its engines' batch limit, added up over its DP ranks; 0 for any other
// instance. A user gives it to ptdmon as max_num_seqs (docs/advisor.md).
func (c *Cluster) MaxNumSeqs(name string) int { return c.model.MaxNumSeqs(name) }
