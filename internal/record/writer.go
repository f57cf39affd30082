//go:build !norecord

package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Recorder is a ledger.Tap that writes what the ledger takes to a TSDB.
type Recorder struct {
	opts Options
	db   *tsdb.DB
	log  *slog.Logger
	ch   chan *event // pointers: an event is kilobytes, the queue holds thousands
	done chan struct{}

	live    atomic.Bool // false while Resume feeds the ledger
	dropped atomic.Uint64
	lastErr atomic.Pointer[string]

	sendMu sync.Mutex // guards ch against a send after Close
	shut   bool

	errs *errorLog // the failures' texts; the loop's
	// ckpt writes the ledger's checkpoints (checkpoint.go); set by Resume.
	ckpt     atomic.Pointer[checkpointer]
	restored int       // points Resume took from the checkpoint (tests)
	app      *appender // the loop's; read by tests after Close

	mu       sync.Mutex // guards meta
	meta     Meta
	closeErr error           // Close's, returned by every call
	lastTick time.Time       // read and written under the ledger's lock only
	pending  []engine.Target // likewise
	closed   sync.Once
}

// event is one input of the ledger, copied out of it.
type event struct {
	tick    bool
	at      time.Time
	after   time.Time // the last tick before a scrape reached the ledger
	scrape  ledger.Scrape
	ok      bool // the scrape read something: obs holds it
	obs     engine.Observation
	point   ledger.Point
	targets []engine.Target
}

// Create opens (or creates) the recording in opts.Dir for writing. An
// existing recording is kept: Resume brings it back into a ledger.
func Create(opts Options) (*Recorder, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Queue <= 0 {
		opts.Queue = 1 << 16
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("recording directory: %w", err)
	}
	to := tsdbOptions(opts)
	// The TSDB's own progress lines (WAL replay, compactions) are
	// Prometheus's business; its warnings and errors are ptdmon's.
	tlog := slog.New(warnOnly{opts.Logger.Handler()}).With("component", "record")
	db, err := tsdb.Open(opts.Dir, tlog, nil, to, nil)
	if err != nil {
		return nil, fmt.Errorf("open recording %s: %w", opts.Dir, err)
	}
	errs, err := openErrorLog(opts.Dir)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	r := &Recorder{opts: opts, db: db, log: opts.Logger, ch: make(chan *event, opts.Queue), done: make(chan struct{}), errs: errs}
	old, err := readMeta(opts.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		r.log.Warn("run.json unreadable; starting it again", "err", err)
	}
	r.meta = merge(old, opts.Meta, time.Now())
	if err := ownsAll(opts.Dir, r.meta, db); err != nil {
		_ = errs.close()
		_ = db.Close()
		return nil, err
	}
	if err := writeMeta(opts.Dir, r.meta); err != nil {
		_ = errs.close()
		_ = db.Close()
		return nil, err
	}
	r.live.Store(true)
	go r.loop()
	return r, nil
}

// ownsAll refuses to record into a directory whose blocks or WAL are of
// another run: the recording would mix them.
func ownsAll(dir string, m Meta, db *tsdb.DB) error {
	var foreign []string
	for _, b := range db.Blocks() {
		if why := m.foreign(b); why != "" {
			foreign = append(foreign, b.Meta().ULID.String()+" ("+why+")")
		}
	}
	if why := m.foreign(db.Head()); why != "" {
		foreign = append(foreign, "wal ("+why+")")
	}
	if len(foreign) > 0 {
		return foreignError(dir, foreign)
	}
	return nil
}

// tsdbOptions are the recording's TSDB options: Prometheus' defaults,
// bounded as opts says.
func tsdbOptions(opts Options) *tsdb.Options {
	// Blocks of 2 h, as Prometheus cuts them; compaction runs in the DB's
	// own goroutine, off the scrape path.
	to := tsdb.DefaultOptions()
	if opts.Retention > 0 {
		to.RetentionDuration = opts.Retention.Milliseconds()
	}
	to.MaxBytes = opts.MaxBytes
	// Nothing queries the head while it is written: a replay or a report
	// opens the directory read-only, and a resume reads before the first
	// append. Isolation, which lets a query running beside the appends see
	// whole commits only, would cost every sample an append ID kept on its
	// series, for no reader.
	to.IsolationDisabled = true
	return to
}

// merge adds a process, described by m, to the run old describes.
func merge(old, m Meta, now time.Time) Meta {
	out := m
	out.Targets = old.Targets
	out.Models = old.Models
	out.TargetSets = old.TargetSets
	out.Annotations = old.Annotations
	out.ErrorTextsCut = old.ErrorTextsCut
	out.CompleteEvery = max(old.CompleteEvery, Duration(completeEvery))
	out.RunID, out.RunIDSince = old.RunID, old.RunIDSince
	if out.RunID == "" {
		out.RunID = NewRunID()
		if len(old.Processes) > 0 {
			out.RunIDSince = now // a run of an earlier version: its blocks carry no id
		}
	}
	// A run read directly only if every process of it did.
	out.DirectReads = m.DirectReads && (len(old.Processes) == 0 || old.DirectReads)
	out.Processes = append(old.Processes, Process{Start: now, ConfigHash: m.ConfigHash})
	return out
}

// Resume brings the run's history back into l (a ledger whose Tap is r):
// its points, the counters' state and so the verdict timeline and learned
// capacities. The points the checkpoint holds (CheckpointDir) are restored
// as the live ledger computed them; the recorded inputs are fed only from
// a warm-up before the last of them on, so a resume costs about the same
// whatever the run's length. Without a usable checkpoint every input the
// ledger's history needs is fed, as a replay does. Call it before the
// scrape loops start: from then on the ledger's sealed points are
// checkpointed.
func (r *Recorder) Resume(l *ledger.Ledger) (int, error) {
	r.live.Store(false)
	defer r.live.Store(true)
	r.mu.Lock()
	meta := r.meta
	r.mu.Unlock()
	dir := filepath.Join(r.opts.Dir, CheckpointDir)
	l.KeepCheckpoints()
	if len(meta.Processes) < 2 {
		// A new run: a checkpoint left here belongs to no recording.
		if err := os.RemoveAll(dir); err != nil {
			r.log.Warn("stale checkpoint not removed; no checkpoint is kept", "err", err)
			return 0, nil
		}
		if c, err := openCheckpointer(l, dir, 0, r.log); err == nil {
			r.ckpt.Store(c)
		} else {
			r.log.Warn("no checkpoint is kept; a later resume recomputes the history", "err", err)
		}
		return 0, nil
	}
	texts, err := readErrorTexts(r.opts.Dir, meta.ErrorTextsCut)
	if err != nil {
		return 0, err
	}
	// The points the ledger keeps start at its History-th tick from the end.
	ticks, err := recordedTicks(r.db)
	if err != nil {
		return 0, err
	}
	var kept time.Time
	if h := l.Config().History; len(ticks) > h {
		kept = time.UnixMilli(ticks[len(ticks)-h])
	}
	restored, from, c := restoreCheckpoint(l, dir, kept, r.log)
	r.restored = restored
	if c != nil {
		r.ckpt.Store(c)
	}
	n, last, err := feed(r.db, meta, texts, l, time.Time{}, from, nil, false)
	// The new process's first scrapes come after the last recorded tick.
	r.lastTick = last
	if last.Before(from) {
		r.lastTick = from
	}
	return restored + n, err
}

// Annotate marks a moment of the run.
func (r *Recorder) Annotate(at time.Time, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.meta.Annotations = append(r.meta.Annotations, Annotation{Time: at, Text: text})
	return writeMeta(r.opts.Dir, r.meta)
}

// Status is the recorder's health: empty when it writes, else the last
// error (a full disk) and how many inputs were dropped.
func (r *Recorder) Status() (errText string, dropped uint64) {
	if p := r.lastErr.Load(); p != nil {
		errText = *p
	}
	return errText, r.dropped.Load()
}

// Dir is where the recording is.
func (r *Recorder) Dir() string { return r.opts.Dir }

// Targets implements ledger.Tap.
func (r *Recorder) Targets(ts []engine.Target) {
	if !r.live.Load() {
		return
	}
	// The set takes effect after the last tick (zero: before anything of
	// the run), which is where a replay applies it.
	r.pending = append([]engine.Target(nil), ts...)
	if r.pending == nil {
		r.pending = []engine.Target{}
	}
}

// flushTargets sends the pending target set, placed at key.
func (r *Recorder) flushTargets(key time.Time) {
	if r.pending != nil {
		r.send(&event{targets: r.pending, at: key})
		r.pending = nil
	}
}

// Scrape implements ledger.Tap; s.Obs is copied.
func (r *Recorder) Scrape(s ledger.Scrape) {
	if !r.live.Load() {
		return
	}
	e := scrapeEvents.Get().(*event)
	obs := e.obs // its slices are reused
	*e = event{at: s.Time, after: r.lastTick, scrape: s}
	r.flushTargets(r.lastTick)
	if s.Obs != nil {
		e.obs = obs
		copyObs(&e.obs, s.Obs)
		e.ok = true
		e.scrape.Obs = nil
	}
	if !r.send(e) {
		scrapeEvents.Put(e)
	}
}

// scrapeEvents are the scrapes' events, taken back once written: an
// engine's read is about 50 counters and 150 buckets, copied at every read
// of every target.
var scrapeEvents = sync.Pool{New: func() any { return new(event) }}

// Tick implements ledger.Tap.
func (r *Recorder) Tick(now time.Time, p ledger.Point) {
	if !r.live.Load() {
		return
	}
	r.flushTargets(r.lastTick)
	r.lastTick = now
	// The verdict reads the instances; the history may reuse their slice.
	p.Instances = append([]ledger.InstancePoint(nil), p.Instances...)
	r.send(&event{tick: true, at: now, point: p})
}

// send queues e, and reports whether it did.
func (r *Recorder) send(e *event) bool {
	r.sendMu.Lock()
	defer r.sendMu.Unlock()
	if r.shut {
		return false // a scrape that ends after the recording: not recorded, never a panic
	}
	select {
	case r.ch <- e:
		return true
	default:
		if r.dropped.Add(1) == 1 {
			r.log.Warn("recording falls behind; inputs dropped (the live view is unaffected)")
		}
		return false
	}
}

// Close writes what is queued, marks the process's stop, cuts the head
// into a block and closes the TSDB. Every call returns the first call's
// error: whoever closes last still learns that the run is not on disk.
func (r *Recorder) Close() error {
	r.closed.Do(func() {
		var err error
		r.sendMu.Lock()
		r.shut = true
		close(r.ch)
		r.sendMu.Unlock()
		<-r.done
		err = r.errs.close()
		if c := r.ckpt.Load(); c != nil {
			if cerr := c.close(); err == nil && cerr != nil {
				err = fmt.Errorf("checkpoint: %w", cerr)
			}
		}
		r.mu.Lock()
		r.meta.Processes[len(r.meta.Processes)-1].Stop = time.Now()
		if merr := writeMeta(r.opts.Dir, r.meta); err == nil {
			err = merr
		}
		r.mu.Unlock()
		// A stopped run is handed on as blocks: promtool, Prometheus and
		// a copy of the directory need no WAL replay to read it.
		if h := r.db.Head(); h.NumSeries() > 0 {
			if cerr := r.db.CompactHead(tsdb.NewRangeHead(h, h.MinTime(), h.MaxTime())); cerr != nil && err == nil {
				err = fmt.Errorf("write the recording's block: %w", cerr)
			}
		}
		if cerr := r.db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close recording: %w", cerr)
		}
		if err != nil {
			err = fmt.Errorf("recording %s: %w", r.opts.Dir, err)
		}
		r.closeErr = err
	})
	return r.closeErr
}

// abandon writes what is queued and closes the TSDB, leaving the head in
// the WAL and the process without a stop, as a killed process leaves them
// (tests).
func (r *Recorder) abandon() error {
	var err error
	r.closed.Do(func() {
		r.sendMu.Lock()
		r.shut = true
		close(r.ch)
		r.sendMu.Unlock()
		<-r.done
		_ = r.errs.close()
		if c := r.ckpt.Load(); c != nil {
			_ = c.close()
		}
		err = r.db.Close()
	})
	return err
}

// loop appends the queued inputs; it commits at every tick, so a kill
// loses at most the inputs since the last tick and what the WAL had not
// yet written.
func (r *Recorder) loop() {
	defer close(r.done)
	// Annotate and the target notes change the meta from other goroutines
	// while this one starts: read what the loop needs under their lock.
	r.mu.Lock()
	window, interval, runID := r.meta.Window, r.meta.Interval, r.meta.RunID
	r.mu.Unlock()
	w := newAppender(r.db, time.Duration(window))
	w.run = runID
	r.app = w
	vs := newVerdicts(window, interval)
	for e := range r.ch {
		var err error
		switch {
		case e.targets != nil:
			r.noteTargets(e.at, e.targets)
			continue
		case e.tick:
			err = w.tick(e.at, &e.point)
			if err == nil {
				err = vs.observe(w, &e.point)
			}
			if err == nil {
				err = w.commit()
			} else {
				_ = w.rollback()
			}
			// Only a commit tells that the disk takes the writes again.
			r.fail(err)
			if c := r.ckpt.Load(); c != nil {
				if err := c.take(); err != nil {
					r.log.Warn("checkpoint not written; a resume recomputes the history from here", "err", err)
				}
			}
		default:
			if err = w.scrape(e); err != nil {
				r.fail(err)
			}
			if e.ok {
				r.noteModelOnce(w.target(e.scrape.Target), e.scrape.Target, &e.obs)
			} else {
				r.noteError(&e.scrape)
			}
			scrapeEvents.Put(e)
		}
	}
	r.fail(w.commit())
}

// fail records err (a full disk, a closed DB) as the recorder's status;
// nil clears it. Errors are logged once per kind change, not per sample.
func (r *Recorder) fail(err error) {
	if err == nil {
		if r.lastErr.Load() != nil {
			r.lastErr.Store(nil)
			r.log.Info("recording resumed writing")
		}
		return
	}
	msg := err.Error()
	if p := r.lastErr.Load(); p == nil || *p != msg {
		r.log.Error("recording failed; the live view goes on", "err", err)
	}
	r.lastErr.Store(&msg)
}

// noteError keeps a failure's text in ErrorsFile while it has room; past
// it, run.json says from when texts are missing.
func (r *Recorder) noteError(s *ledger.Scrape) {
	r.mu.Lock()
	cut := r.meta.ErrorTextsCut
	r.mu.Unlock()
	if !cut.IsZero() {
		return
	}
	kept, err := r.errs.note(s.Target, s.Time, errorText(s))
	if err != nil {
		r.fail(err)
	}
	if !kept {
		r.mu.Lock()
		r.meta.ErrorTextsCut = s.Time
		r.writeMetaLogged()
		r.mu.Unlock()
		r.log.Warn("recording keeps no more scrape error texts (the file is full); failures keep their class", "file", ErrorsFile)
	}
}

func (r *Recorder) noteTargets(at time.Time, ts []engine.Target) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.meta.TargetSets = append(r.meta.TargetSets, TargetSet{From: at, Targets: ts})
	for _, t := range ts {
		if i := r.targetIndex(t.Name); i < 0 {
			r.meta.Targets = append(r.meta.Targets, TargetMeta{Name: t.Name, URL: t.URL, Role: string(t.Role), Engine: string(t.Engine)})
		}
	}
	r.writeMetaLogged()
}

func (r *Recorder) targetIndex(name string) int {
	for i, t := range r.meta.Targets {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// noteModelOnce notes what a target's read says it is when it says
// something else than the read noted last: reads repeat it, and noting
// takes the run's lock and a walk of its targets.
func (r *Recorder) noteModelOnce(tr *targetRefs, target string, o *engine.Observation) {
	if tr.notedKey == tr.markerKey {
		return // a marker with nothing to note (all empty) is noted already
	}
	if r.noteModel(target, o) {
		tr.notedKey = tr.markerKey
	}
}

// noteModel keeps what a target's reads say it is: role, engine, model.
// It reports whether the run lists the target.
func (r *Recorder) noteModel(target string, o *engine.Observation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.targetIndex(target)
	if i < 0 {
		return false
	}
	t := &r.meta.Targets[i]
	changed := false
	set := func(dst *string, v string) {
		if v != "" && *dst != v {
			*dst, changed = v, true
		}
	}
	set(&t.Role, string(o.Role))
	set(&t.Engine, string(o.Engine))
	set(&t.Model, o.Model)
	if o.Model != "" && !contains(r.meta.Models, o.Model) {
		r.meta.Models = append(r.meta.Models, o.Model)
		changed = true
	}
	if changed {
		r.writeMetaLogged()
	}
	return true
}

func (r *Recorder) writeMetaLogged() {
	if err := writeMeta(r.opts.Dir, r.meta); err != nil {
		r.fail(err)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// copyObs deep-copies src into dst, reusing nothing of src and the
// slices dst has.
func copyObs(dst, src *engine.Observation) {
	dst.Engine, dst.Role, dst.Model, dst.SchedulerMode = src.Engine, src.Role, src.Model, src.SchedulerMode
	dst.Counters = append(dst.Counters[:0], src.Counters...)
	dst.Gauges, dst.HasGauges = src.Gauges, src.HasGauges
	for i := range src.Histograms {
		h := src.Histograms[i]
		h.Buckets = append(dst.Histograms[i].Buckets[:0], h.Buckets...)
		dst.Histograms[i] = h
	}
	dst.Samples = src.Samples
	dst.Notes, dst.Ignored = nil, nil
}

// appender writes events to the TSDB, keeping each series' reference so
// that a scrape's samples are appended without hashing their labels again;
// the references are kept per target, in arrays where the metric says
// where, so the lookups stay cheap at thousands of series.
type appender struct {
	window  string // the label of the windowed rates, e.g. "5s"
	run     string // the run's id, written at every tick
	db      *tsdb.DB
	app     storage.Appender
	refs    map[seriesKey]*ref // ticks' series and scrape markers
	targets map[string]*targetRefs
}

type ref struct {
	ls  labels.Labels
	ref storage.SeriesRef
	// last is the value last written, kept the target's read that wrote
	// or carried it (changes.go); 0: no reader holds a value.
	last uint64
	kept uint32
}

// seriesKey names one series of a tick, or the marker of a failed read.
type seriesKey struct {
	target string
	name   string
	a, b   string // stage, window, queue, pool, reason
}

// targetRefs are one target's series of canonical values.
type targetRefs struct {
	reads reads
	// The read's marker (its labels name the engine, role and model the
	// read found), place, cost and kind.
	marker    ref
	markerKey markerKey
	// notedKey is the marker whose engine, role and model run.json holds.
	notedKey                                 markerKey
	order, duration, bytes, samples, changes ref
	counters                                 map[counterKey]*ref
	gauges                                   [engine.NumGauges]ref
	hists                                    [engine.NumHistograms]histRefs
}

type markerKey struct {
	engine      engine.Engine
	role        engine.Role
	model, mode string
}

type counterKey struct {
	m      engine.Metric
	series uint64
}

type histRefs struct {
	les        []float64
	buckets    []ref
	sum, count ref
}

func newAppender(db *tsdb.DB, window time.Duration) *appender {
	return &appender{db: db, window: ledger.WindowLabel(window), refs: make(map[seriesKey]*ref), targets: make(map[string]*targetRefs)}
}

func (w *appender) target(name string) *targetRefs {
	t := w.targets[name]
	if t == nil {
		t = &targetRefs{counters: make(map[counterKey]*ref)}
		w.targets[name] = t
	}
	return t
}

// add appends to the series k names, built by mk the first time.
func (w *appender) add(k seriesKey, mk func() labels.Labels, t int64, v float64) error {
	r := w.refs[k]
	if r == nil {
		r = &ref{ls: mk()}
		w.refs[k] = r
	}
	_, err := w.put(r, t, v)
	return err
}

// put appends to r, whose labels are set, and reports whether the sample
// was written.
func (w *appender) put(r *ref, t int64, v float64) (bool, error) {
	if w.app == nil {
		w.app = w.db.Appender(context.Background())
	}
	nr, err := w.app.Append(r.ref, r.ls, t, v)
	if err != nil {
		if errors.Is(err, storage.ErrOutOfOrderSample) || errors.Is(err, storage.ErrDuplicateSampleForTimestamp) || errors.Is(err, storage.ErrTooOldSample) {
			return false, nil // a clock stepped back: keep the recording going
		}
		return false, fmt.Errorf("append %s: %w", r.ls.Get(labels.MetricName), err)
	}
	r.ref = nr
	return true, nil
}

// forget drops every reference: after a failed commit they may name
// series the head never created.
func (w *appender) forget() {
	clear(w.refs)
	clear(w.targets)
}

func (w *appender) rollback() error {
	if w.app == nil {
		return nil
	}
	err := w.app.Rollback()
	w.app = nil
	w.forget()
	return err
}

func (w *appender) commit() error {
	if w.app == nil {
		return nil
	}
	err := w.app.Commit()
	w.app = nil
	if err != nil {
		w.forget()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// warnOnly passes on warnings and errors only.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnOnly) WithAttrs(as []slog.Attr) slog.Handler { return warnOnly{w.Handler.WithAttrs(as)} }
func (w warnOnly) WithGroup(g string) slog.Handler       { return warnOnly{w.Handler.WithGroup(g)} }
