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

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Stage names, as in the exported metrics' stage label.
const (
	StagePrefill = "prefill"
	StageKV      = "kv"
	StageDecode  = "decode"
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
	// SlowLink is how many times its fastest window's median the KV
	// transfer time must be for the link to count as the constraint when
	// both KV caches are full (default 2): a shared, saturated link slows
	// every transfer, a full decode cache only delays their start.
	SlowLink float64
	// MinSamples is the number of non-overlapping saturated windows needed
	// before a capacity is given (default 3).
	MinSamples int
}

func (o *Options) defaults() {
	if o.Window <= 0 {
		o.Window = 5 * time.Second
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
	if o.SlowLink <= 0 {
		o.SlowLink = 2
	}
	if o.MinSamples <= 0 {
		o.MinSamples = 3
	}
}

// Capacity is what one stage was seen to sustain while saturated.
type Capacity struct {
	Stage string `json:"stage"`
	// PerInstance is requests/s of one instance (for kv: one KV-exporting
	// instance's link) at saturation: the mean over saturated windows.
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
	// AtLeast is the largest per-instance windowed rate seen when the stage
	// was not saturated: its capacity is no smaller.
	AtLeast ledger.Num `json:"at_least_per_instance"`

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
	saturated           time.Duration
	prev                time.Time
	from, to            time.Time
	instances           int
	signal              string
}

// Learner keeps the capacity evidence over a run. Feed it every point in
// time order; it is not safe for concurrent use.
type Learner struct {
	opts       Options
	st         [3]stageState
	maxRunning float64
	minXfer    float64 // fastest windowed median KV transfer time seen; 0 = none yet
	last       ledger.Point
	n          int
}

// NewLearner returns an empty learner.
func NewLearner(opts Options) *Learner {
	opts.defaults()
	return &Learner{opts: opts}
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
	if p.Decode.Running.OK() && p.Decode.Running.V > l.maxRunning {
		l.maxRunning = p.Decode.Running.V
	}
	if x := p.KV.XferTime.P50; x.OK() && x.V > 0 && (l.minXfer == 0 || x.V < l.minXfer) {
		l.minXfer = x.V
	}
	sat := l.saturation(p)
	for i := range l.st {
		l.step(i, &l.st[i], p, sat[i])
	}
	l.last = p
	l.n++
}

// saturation says, for each stage, whether p shows it saturated by itself
// (backlogged and not blocked by the stage after it), and names the signal.
func (l *Learner) saturation(p ledger.Point) [3]string {
	o := l.opts
	full := func(n ledger.Num) bool { return n.OK() && n.V >= o.KVFull }
	pFull, dFull := full(p.Prefill.KVUsage), full(p.Decode.KVUsage)
	var out [3]string
	// Prefill: prompts wait for compute (SGLang's bootstrap queue waits
	// for decode, not for prefill) while prefilled KV still has room.
	// Checked per instance where the point has them: one blocked engine
	// lowers the stage's rate without filling the stage's mean KV cache.
	backlog := func(waiting, bootstrap ledger.Num) bool {
		if !waiting.OK() {
			return false
		}
		q := waiting.V
		if bootstrap.OK() {
			q -= bootstrap.V
		}
		return q >= o.MinQueue
	}
	prefillSat := !pFull && backlog(p.Prefill.Waiting, p.Prefill.Queues.Bootstrap)
	for _, in := range p.Instances {
		switch in.Role {
		case "prefill":
			if full(in.KVUsage) {
				pFull = true
			}
			if full(in.KVUsage) || !backlog(in.Waiting, in.Queues.Bootstrap) {
				prefillSat = false
			}
		case "decode":
			if full(in.KVUsage) {
				dFull = true
			}
		}
	}
	if prefillSat {
		out[0] = fmt.Sprintf("every prefill instance has ≥ %g waiting and its KV cache below %g", o.MinQueue, o.KVFull)
	}
	// The link is slow when transfers take SlowLink× their fastest median.
	x := p.KV.XferTime.P50
	slow := x.OK() && l.minXfer > 0 && x.V >= o.SlowLink*l.minXfer
	// KV: requests the link has not shipped fill the prefill KV cache, or
	// fill the decode KV cache (vLLM reserves decode slots before the
	// transfer) while every transfer is slowed by sharing the link.
	switch {
	case pFull && !dFull:
		out[1] = fmt.Sprintf("prefill KV cache ≥ %g with decode KV cache below it", o.KVFull)
	case dFull && slow:
		out[1] = fmt.Sprintf("a KV cache ≥ %g with KV transfers at ≥ %g× their fastest median time", o.KVFull, o.SlowLink)
	}
	// Decode: the batch is as large as it gets and requests queue for it
	// (decode KV cache full, or SGLang's prealloc queue non-empty) while
	// the link is not what holds them.
	if r := p.Decode.Running; r.OK() && l.maxRunning > 0 && r.V >= o.RunningFull*l.maxRunning && !slow {
		pre := p.Decode.Queues.Prealloc
		if dFull || pre.OK() && pre.V >= o.MinQueue {
			out[2] = fmt.Sprintf("decode batch ≥ %g of its largest (%g) with decode KV cache ≥ %g or requests in prealloc", o.RunningFull, l.maxRunning, o.KVFull)
		}
	}
	return out
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
		return k.Window, ledger.Absent("kv has no token rate"), k.BytesWindow, k.Up, !k.Partial && k.Up == k.Instances
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
		// least this much.
		if complete && rate.OK() && up > 0 && p.Time.Sub(s.lastFree) >= w {
			s.lastFree = p.Time
			if v := rate.V / float64(up); !s.seenRate || v > s.atLeast {
				s.atLeast, s.seenRate = v, true
			}
		}
		return
	}
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

var stageNames = [3]string{StagePrefill, StageKV, StageDecode}

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
		Stage: stageNames[i], Samples: s.rate.n, Saturated: s.saturated.Seconds(),
		From: s.from, To: s.to, Instances: s.instances,
	}
	if s.seenRate {
		c.AtLeast = ledger.Val(s.atLeast)
	} else {
		c.AtLeast = ledger.Absent("no complete unsaturated window yet")
	}
	if s.rate.n < l.opts.MinSamples {
		why := fmt.Sprintf("not known until %s saturates: %d of %d saturated windows of %gs so far",
			stageNames[i], s.rate.n, l.opts.MinSamples, l.opts.Window.Seconds())
		c.PerInstance, c.StdErr, c.Total, c.Tokens, c.Bytes = ledger.Absent(why), ledger.Absent(why), ledger.Absent(why), ledger.Absent(why), ledger.Absent(why)
		c.Evidence = "never saturated long enough; " + saturationRule(i, l.opts)
		return c
	}
	c.PerInstance = ledger.Val(s.rate.mean)
	c.StdErr = ledger.Val(s.rate.stderr())
	if s.instances > 0 {
		c.Total = ledger.Val(s.rate.mean * float64(s.instances))
	} else {
		c.Total = ledger.Absent("no " + stageNames[i] + " instance up now")
	}
	c.Tokens = meanOr(s.tokens, stageNames[i]+" token rate not exported")
	c.Bytes = meanOr(s.bytes, "no KV byte rate")
	if i != 1 {
		c.Bytes = ledger.Absent(stageNames[i] + " moves no KV bytes")
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
		return fmt.Sprintf("kv counts as saturated while the prefill KV cache is ≥ %g full and the decode KV cache is not, or a KV cache is full and transfers take ≥ %g× their fastest median time", o.KVFull, o.SlowLink)
	}
	return fmt.Sprintf("decode counts as saturated while its batch is ≥ %g of the largest seen and its KV cache is ≥ %g full or requests wait in prealloc", o.RunningFull, o.KVFull)
}
