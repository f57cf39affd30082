// Package advice learns each stage's capacity from what the ledger observed
// while that stage was saturated, and turns it into sizing advice: how many
// prefill and decode instances and how much KV bandwidth carry a given
// arrival rate with headroom (docs/advisor.md). Everything here is a pure
// function of ledger points.
package advice

import (
	"fmt"
	"math"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/saturation"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Options are the thresholds of the saturation test.
type Options struct {
	// Window is the ledger's W: a saturated stretch must cover a whole
	// window for the windowed rate at its end to be a capacity sample, and
	// samples are taken at least W apart so they do not overlap.
	Window time.Duration
	// MinQueue is the smallest backlog (requests) that counts as non-empty
	// (default 1).
	MinQueue float64
	// KVFull is the KV cache usage from which an engine counts as full
	// (default 0.9): a full prefill cache holds prefilled requests the link
	// has not shipped yet, a full decode cache admits no more transfers.
	KVFull float64
	// RunningFull is the fraction of the largest decode batch seen in the
	// run from which the decode batch counts as full (default 0.95).
	RunningFull float64
	// MinSamples is the number of non-overlapping saturated windows needed
	// before a capacity is given (default 3).
	MinSamples int
	// AtLeastWindows is the number of consecutive unsaturated windows whose
	// mean rate bounds the capacity from below (default 6: 30 s at W = 5 s).
	AtLeastWindows int
	// Prior, if set, is an earlier run's capacities, which stand until this
	// run has its own (prior.go).
	Prior *Prior
}

func (o *Options) defaults() {
	if o.Window <= 0 {
		o.Window = ledger.DefaultWindow
	}
	if o.MinQueue <= 0 {
		o.MinQueue = 1
	}
	if o.KVFull <= 0 {
		o.KVFull = 0.9
	}
	if o.RunningFull <= 0 {
		o.RunningFull = 0.95
	}
	if o.MinSamples <= 0 {
		o.MinSamples = 3
	}
	if o.AtLeastWindows <= 0 {
		o.AtLeastWindows = 6
	}
}

// Capacity is what one stage was seen to sustain while saturated.
type Capacity struct {
	Stage stage.Stage `json:"stage"`
	// PerInstance is requests/s of one instance (for kv: one link, an
	// instance whose connector moved bytes) at saturation: the mean over
	// saturated windows.
	PerInstance ledger.Num `json:"requests_per_second_per_instance"`
	// StdErr is the standard error of PerInstance over those windows.
	StdErr ledger.Num `json:"stderr_per_instance"`
	// Stage is PerInstance × the instances up now.
	Total ledger.Num `json:"requests_per_second"`
	// Tokens is the per-instance token throughput at saturation: prompt
	// tokens/s for prefill, generated tokens/s for decode.
	Tokens ledger.Num `json:"tokens_per_second_per_instance"`
	// Bytes is the per-instance KV bytes/s at link saturation (kv only).
	Bytes ledger.Num `json:"bytes_per_second_per_instance"`
	// AtLeast is the largest per-instance rate the stage sustained over
	// AtLeastWindows consecutive unsaturated windows: its capacity is no
	// smaller.
	AtLeast ledger.Num `json:"at_least_per_instance"`

	// Basis is what the capacity rests on (BasisSaturated, BasisBusy,
	// BasisBatch, BasisTransferTime), "" while nothing supports one; Bound
	// says when it only bounds the capacity (AtLeast, AtMost).
	Basis string `json:"basis,omitempty"`
	Bound string `json:"bound,omitempty"`
	// Utilisation is the stage's rate over the last minute against the
	// capacity of its instances up; a capacity known at least gives a
	// utilisation at most, and the other way round.
	Utilisation ledger.Num `json:"utilisation"`

	Samples   int       `json:"samples"`
	Saturated float64   `json:"saturated_seconds"`
	From      time.Time `json:"from,omitzero"`
	To        time.Time `json:"to,omitzero"`
	Instances int       `json:"instances_up"`
	Evidence  string    `json:"evidence"`
}

// MarshalJSON adds the reasons of absent values.
func (c Capacity) MarshalJSON() ([]byte, error) {
	type alias Capacity
	return marshalWithAbsent(c, alias(c))
}

// stat is a running mean and variance (Welford).
type stat struct {
	n       int
	mean, m float64
}

func (s *stat) add(x float64) {
	s.n++
	d := x - s.mean
	s.mean += d / float64(s.n)
	s.m += d * (x - s.mean)
}

func (s *stat) stderr() float64 {
	if s.n < 2 {
		return math.NaN()
	}
	return math.Sqrt(s.m/float64(s.n-1)) / math.Sqrt(float64(s.n))
}

// stageState accumulates one stage's saturated windows over the run.
type stageState struct {
	rate, tokens, bytes stat
	atLeast             float64
	seenRate            bool
	since               time.Time // start of the current saturated stretch; zero when not saturated
	lastSample          time.Time
	lastFree            time.Time // last non-overlapping unsaturated sample
	blockSum            float64   // of the current block of unsaturated windows
	blockN              int
	saturated           time.Duration
	prev                time.Time
	from, to            time.Time
	instances           int
	signal              string
}

// Learner keeps the capacity evidence over a run. Feed it every point in
// time order; it is not safe for concurrent use.
type Learner struct {
	opts Options
	st   [3]stageState
	// maxRunning is the largest decode batch seen, per decode instance
	// and ("decode") for the stage.
	maxRunning map[string]float64
	signals    [3]string // what each stage's saturation rests on
	last       ledger.Point
	n          int
	// recent is each decode instance's running batch over the newest
	// saturation.PinSeconds, for the rule the verdict shares.
	recent map[string][]timedRun
	// est estimates each stage's capacity below saturation.
	est estimator
	// prior is an earlier run's capacities.
	prior prior
}

// timedRun is one sample of a decode instance's running batch.
type timedRun struct {
	t time.Time
	v float64
}

// NewLearner returns an empty learner.
func NewLearner(opts Options) *Learner {
	opts.defaults()
	o := opts
	return &Learner{opts: opts, prior: prior{p: opts.Prior}, maxRunning: map[string]float64{}, recent: map[string][]timedRun{}, signals: [3]string{
		fmt.Sprintf("every prefill instance has ≥ %g request waiting and its KV cache below %g", o.MinQueue, o.KVFull),
		fmt.Sprintf("every prefill instance's KV cache is ≥ %g full of requests the link has not shipped (or, SGLang, its bootstrap queue waits for decode KV held by transfers), and decode is not saturated", o.KVFull),
		fmt.Sprintf("every decode instance runs its largest batch (≥ %g of the largest seen) with requests ready for it", o.RunningFull),
	}}
}

// Learn runs a learner over points (oldest first) and returns the
// capacities of prefill, kv and decode.
func Learn(points []ledger.Point, opts Options) []Capacity {
	l := NewLearner(opts)
	for _, p := range points {
		l.Observe(p)
	}
	return l.Capacities()
}

// Observe takes the next point.
func (l *Learner) Observe(p ledger.Point) {
	if l.n > 0 && !p.Time.After(l.last.Time) {
		return // out of order or repeated: the stretch logic needs time to advance
	}
	l.track("decode", p.Decode.Running)
	for _, in := range p.Instances {
		if in.Role == "decode" {
			l.track(in.Target, in.Running)
			l.remember(p.Time, in.Target, in.Running)
		}
	}
	sat := l.saturation(p)
	for i := range l.st {
		l.step(i, &l.st[i], p, sat[i])
	}
	l.est.observe(p)
	l.prior.check(p)
	l.last = p
	l.n++
}

// remember keeps a decode instance's running batch over the newest
// saturation.PinSeconds.
func (l *Learner) remember(at time.Time, key string, running ledger.Num) {
	rs := l.recent[key]
	from := at.Add(-saturation.PinSeconds * time.Second)
	k := 0
	for k < len(rs) && rs[k].t.Before(from) {
		k++
	}
	rs = append(rs[:0], rs[k:]...)
	if running.OK() {
		rs = append(rs, timedRun{at, running.V})
	}
	l.recent[key] = rs
}

// pinned reports whether a decode instance's batch is pinned at its limit
// by the rule the verdict uses (saturation.Pinned).
func (l *Learner) pinned(key string) bool {
	rs := l.recent[key]
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = r.v
	}
	ok, _ := saturation.Pinned(vs)
	return ok
}

func (l *Learner) track(key string, running ledger.Num) {
	if running.OK() && running.V > l.maxRunning[key] {
		l.maxRunning[key] = running.V
	}
}

// saturation says, for each stage, whether p shows it saturated by itself
// (backlogged and not blocked by the stage after it), and names the signal.
// The tests run per instance where the point carries them: a stage runs at
// its capacity only when every instance does, and one blocked engine lowers
// the stage's rate without moving the stage's sums much.
func (l *Learner) saturation(p ledger.Point) [3]string {
	o := l.opts
	full := func(n ledger.Num) bool { return n.OK() && n.V >= o.KVFull }
	var out [3]string
	var nP, nD int
	prefillSat, linkSat, decodeSat := true, true, true
	anyPFull := false
	for _, in := range p.Instances {
		if in.Sleep != "" {
			continue // asleep on purpose: out of its stage (StagePoint.Asleep)
		}
		switch in.Role {
		case "prefill":
			nP++
			f := full(in.KVUsage)
			anyPFull = anyPFull || f
			// Prompts wait for compute while prefilled KV has room.
			prefillSat = prefillSat && !f && backlog(in.Waiting, o.MinQueue)
			// The engine's KV cache is full of prefilled requests the
			// link has not shipped yet, or (SGLang, which reserves decode
			// KV before prefill) requests wait for decode KV that is held
			// by transfers, decode itself not being saturated.
			b := in.Queues.Bootstrap
			linkSat = linkSat && (f || b.OK() && b.V >= o.MinQueue)
		case "decode":
			nD++
			decodeSat = decodeSat && l.decodeFull(in, full(in.KVUsage))
		}
	}
	if nP == 0 || nD == 0 {
		// No per-instance detail (trimmed from old points): the stage sums.
		pFull := full(p.Prefill.KVUsage)
		anyPFull = pFull
		prefillSat = !pFull && backlog(p.Prefill.Waiting, o.MinQueue)
		linkSat = pFull
		r := p.Decode.Running
		decodeSat = r.OK() && l.maxRunning["decode"] > 0 && r.V >= o.RunningFull*l.maxRunning["decode"] && full(p.Decode.KVUsage)
	}
	prefillSat = prefillSat && !anyPFull
	if decodeSat {
		out[2] = l.signals[2]
	}
	// A full decode stage holds the link back: the link is saturated only
	// when decode is not.
	if linkSat && !decodeSat {
		out[1] = l.signals[1]
	}
	if prefillSat {
		out[0] = l.signals[0]
	}
	return out
}

// backlog reports whether a prefill queue waiting for compute is non-empty.
// SGLang's waiting gauge (num_queue_reqs) leaves its bootstrap queue out,
// which waits for decode KV, not for prefill compute.
func backlog(waiting ledger.Num, min float64) bool {
	return waiting.OK() && waiting.V >= min
}

// decodeFull reports whether a decode instance runs at its batch limit with
// requests ready for it. Where the engine's waiting gauge holds only
// requests whose KV has arrived (SGLang's num_queue_reqs, the adapter's
// WaitingKVReady), it says so directly. vLLM's counts the
// requests still waiting for their KV too, so there the batch must be as
// large as the instance was ever seen to run and its KV cache full: a link
// that is slow and steady can look the same (docs/advisor.md#limits).
// Where vLLM splits its waiting by reason, only the requests waiting for
// capacity are ready for decode: those deferred for their KV wait for the
// link or for admission, and a decode holding only them has room for
// decode work whatever its batch and its KV cache show.
func (l *Learner) decodeFull(in ledger.InstancePoint, kvFull bool) bool {
	if !in.Running.OK() || !in.Waiting.OK() {
		return false
	}
	if engine.Engine(in.Engine).WaitingKVReady() {
		return in.Waiting.V >= l.opts.MinQueue
	}
	if d := in.WaitingDeferred; d.OK() && in.Waiting.V-d.V < l.opts.MinQueue {
		return false
	}
	// A batch pinned at its limit with requests waiting is decode at its
	// capacity, as the verdict judges it, whatever its KV cache holds: a
	// batch-limited decode never fills its cache.
	if in.Waiting.V >= l.opts.MinQueue && l.pinned(in.Target) {
		return true
	}
	top := l.maxRunning[in.Target]
	return kvFull && top > 0 && in.Running.V >= l.opts.RunningFull*top
}

// stageRates returns the stage's windowed rate (req/s), its token rate,
// its KV bytes rate, and the instances it is summed over.
func stageRates(i int, p ledger.Point) (rate, tokens, bytes ledger.Num, up int, complete bool) {
	switch i {
	case 0:
		s := p.Prefill
		return s.Window, s.PromptTPS, ledger.Absent("prefill has no KV byte rate"), s.Up, !s.Partial && s.Up == s.Instances
	case 1:
		k := p.KV
		return k.Window, ledger.Absent("kv has no token rate"), k.BytesWindow, kvLinks(p), !k.Partial && k.Up == k.Instances
	default:
		s := p.Decode
		return s.Window, s.GenTPS, ledger.Absent("decode has no KV byte rate"), s.Up, !s.Partial && s.Up == s.Instances
	}
}

func (l *Learner) step(i int, s *stageState, p ledger.Point, signal string) {
	w := l.opts.Window
	rate, tokens, bytes, up, complete := stageRates(i, p)
	s.instances = up
	if signal == "" || !complete {
		s.since = time.Time{}
		// Not saturated: the stage carried this rate, so its capacity is at
		// least this much. One window's rate is noisy (a burst of
		// completions), so the bound is the mean of a block of AtLeastWindows
		// consecutive windows.
		if !complete || !rate.OK() || up == 0 {
			s.blockN, s.blockSum = 0, 0
			return
		}
		if p.Time.Sub(s.lastFree) >= w {
			if p.Time.Sub(s.lastFree) > 2*w {
				s.blockN, s.blockSum = 0, 0
			}
			s.lastFree = p.Time
			s.blockSum += rate.V / float64(up)
			s.blockN++
			if s.blockN == l.opts.AtLeastWindows {
				if v := s.blockSum / float64(s.blockN); !s.seenRate || v > s.atLeast {
					s.atLeast, s.seenRate = v, true
				}
				s.blockN, s.blockSum = 0, 0
			}
		}
		return
	}
	s.blockN, s.blockSum = 0, 0
	if s.since.IsZero() {
		s.since = p.Time
		s.prev = p.Time
		return
	}
	s.saturated += p.Time.Sub(s.prev)
	s.prev = p.Time
	s.signal = signal
	// The windowed rate at p covers (p-W, p]: use it once the whole window
	// lies inside the saturated stretch, and only every W.
	if p.Time.Sub(s.since) < w || p.Time.Sub(s.lastSample) < w || !rate.OK() || up == 0 {
		return
	}
	s.lastSample = p.Time
	if s.from.IsZero() {
		s.from = p.Time.Add(-w)
	}
	s.to = p.Time
	n := float64(up)
	s.rate.add(rate.V / n)
	if tokens.OK() {
		s.tokens.add(tokens.V / n)
	}
	if bytes.OK() {
		s.bytes.add(bytes.V / n)
	}
}

// kvLinks counts the instances whose connector moved bytes in the window:
// the links. A connector counts on one side only (FlagCX on prefill, NIXL on
// decode), and the other side may export the same counter standing at 0.
func kvLinks(p ledger.Point) int {
	n := 0
	for _, in := range p.Instances {
		if in.KVBytesW.OK() && in.KVBytesW.V > 0 {
			n++
		}
	}
	if n == 0 && len(p.Instances) == 0 {
		return p.KV.Up
	}
	return n
}

// Capacities returns what is known so far of each stage: prefill, kv, decode.
func (l *Learner) Capacities() []Capacity {
	out := make([]Capacity, 3)
	for i := range l.st {
		out[i] = l.capacity(i)
	}
	return out
}

func (l *Learner) capacity(i int) Capacity {
	s := &l.st[i]
	c := Capacity{
		Stage: stage.All[i], Samples: s.rate.n, Saturated: s.saturated.Seconds(),
		From: s.from, To: s.to, Instances: s.instances,
	}
	if s.seenRate {
		c.AtLeast = ledger.Val(s.atLeast)
	} else {
		c.AtLeast = ledger.Absent(fmt.Sprintf("no %d consecutive complete unsaturated windows yet", l.opts.AtLeastWindows))
	}
	if s.rate.n < l.opts.MinSamples {
		why := fmt.Sprintf("not known until %s saturates: %d of %d saturated windows of %gs so far",
			stage.All[i], s.rate.n, l.opts.MinSamples, l.opts.Window.Seconds())
		c.PerInstance, c.StdErr, c.Total, c.Tokens, c.Bytes = ledger.Absent(why), ledger.Absent(why), ledger.Absent(why), ledger.Absent(why), ledger.Absent(why)
		c.Evidence = "never saturated long enough; " + saturationRule(i, l.opts)
		e, whyNot := l.est.estimate(i)
		if pc, ok := l.prior.capacity(i, whyNot == "" && e.bound == ""); ok {
			return l.fromPrior(i, c, pc)
		}
		if whyNot != "" {
			c.Utilisation = ledger.Absent(whyNot)
			c.Evidence += "; " + whyNot
			if l.prior.dropped != "" {
				c.Evidence += "; no earlier run's capacity: " + l.prior.dropped
			}
			return c
		}
		c.Basis, c.Bound = e.basis, e.bound
		c.Utilisation = ledger.Val(e.utilisation)
		c.Evidence = e.detail + "; " + c.Evidence
		if e.bound == AtLeast {
			// A lower bound sizes nothing: it raises the stage's at-least
			// capacity, and its utilisation is at most this.
			if !c.AtLeast.OK() || e.perInstance > c.AtLeast.V {
				c.AtLeast = ledger.Val(e.perInstance)
			}
			return c
		}
		c.PerInstance = ledger.Val(e.perInstance)
		c.StdErr = ledger.Absent("an estimate below saturation has no spread of saturated windows")
		if s.instances > 0 {
			c.Total = ledger.Val(e.perInstance * float64(s.instances))
		} else {
			c.Total = ledger.Absent("no " + string(stage.All[i]) + " instance up now")
		}
		return c
	}
	c.Basis = BasisSaturated
	c.Utilisation = ledger.Absent("no complete rate in the last minute")
	if v, ok := l.est.load(i); ok && s.rate.mean > 0 {
		c.Utilisation = ledger.Val(v / s.rate.mean)
	}
	c.PerInstance = ledger.Val(s.rate.mean)
	c.StdErr = ledger.Val(s.rate.stderr())
	if s.instances > 0 {
		c.Total = ledger.Val(s.rate.mean * float64(s.instances))
	} else {
		c.Total = ledger.Absent("no " + string(stage.All[i]) + " instance up now")
	}
	c.Tokens = meanOr(s.tokens, string(stage.All[i])+" token rate not exported")
	c.Bytes = meanOr(s.bytes, "no KV byte rate")
	if i != 1 {
		c.Bytes = ledger.Absent(string(stage.All[i]) + " moves no KV bytes")
	}
	if i == 1 {
		c.Tokens = ledger.Absent("kv moves no tokens")
	}
	c.Evidence = fmt.Sprintf("%d non-overlapping %gs windows while %s, %.0fs saturated in all (%s to %s)",
		s.rate.n, l.opts.Window.Seconds(), s.signal, s.saturated.Seconds(),
		s.from.UTC().Format(time.TimeOnly), s.to.UTC().Format(time.TimeOnly))
	return c
}

func meanOr(s stat, why string) ledger.Num {
	if s.n == 0 {
		return ledger.Absent(why)
	}
	return ledger.Val(s.mean)
}

func saturationRule(i int, o Options) string {
	switch i {
	case 0:
		return fmt.Sprintf("prefill counts as saturated while every prefill instance has ≥ %g request waiting and its KV cache below %g", o.MinQueue, o.KVFull)
	case 1:
		return fmt.Sprintf("kv counts as saturated while every prefill instance's KV cache is ≥ %g full (SGLang: or its bootstrap queue is non-empty) and decode is not saturated", o.KVFull)
	}
	return fmt.Sprintf("decode counts as saturated while every decode instance runs its largest batch (≥ %g of the largest seen) with requests ready for it (SGLang: its waiting queue; otherwise its KV cache ≥ %g full), or its batch is pinned at one level for %d s with requests waiting", o.RunningFull, o.KVFull, saturation.PinSeconds)
}

// fromPrior is stage i's capacity as the earlier run knew it (pc), at this
// run's instances up, with this run's utilisation of it.
func (l *Learner) fromPrior(i int, c, pc Capacity) Capacity {
	s := &l.st[i]
	c.Basis, c.Bound = BasisEarlierRun, ""
	c.PerInstance, c.StdErr, c.Tokens, c.Bytes = pc.PerInstance, pc.StdErr, pc.Tokens, pc.Bytes
	if s.instances > 0 {
		c.Total = ledger.Val(pc.PerInstance.V * float64(s.instances))
	} else {
		c.Total = ledger.Absent("no " + string(stage.All[i]) + " instance up now")
	}
	c.Utilisation = ledger.Absent("no complete rate in the last minute")
	if v, ok := l.est.load(i); ok && pc.PerInstance.V > 0 {
		c.Utilisation = ledger.Val(v / pc.PerInstance.V)
	}
	c.Evidence = fmt.Sprintf("from %s, %s there: %s", l.opts.Prior.From, pc.Basis, pc.Evidence)
	return c
}
