package ledger

import (
	"strconv"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// LabelMaxNumSeqs is the target label that carries the most requests the
// instance runs at once where the engine does not export it (vLLM's
// --max-num-seqs): the configuration's max_num_seqs writes it
// (docs/advisor.md#decode-batch).
const LabelMaxNumSeqs = "ptd_max_num_seqs"

// Busy bases: where an instance's busy fraction comes from, best first
// (docs/advisor.md#busy-time). The stage's is its weakest instance's.
const (
	BasisForwardPass = "forward_pass" // the model executions' wall time, from the forward-pass metrics (vLLM, SGLang)
	BasisBusyCounter = "busy_seconds" // the engine's own busy seconds (TensorRT-LLM's iteration statistics)
	BasisIdleCounter = "idle_seconds" // 1 − the scheduler's idle seconds (SGLang)
	BasisOccupancy   = "occupancy"    // the forward occupancy gauge, averaged (SGLang)
	BasisPrefillTime = "prefill_time" // requests' prefill seconds ÷ requests per step (vLLM)
	BasisStepTime    = "step_time"    // steps × the mean inter-token latency (vLLM decode)
	BasisSampled     = "sampled"      // the share of scrapes with an iteration under way (TensorRT-LLM)
	BasisMaxNumSeqs  = "max_num_seqs" // the batch limit the configuration gives
	BasisKVCache     = "kv_cache"     // the requests the KV cache holds, fewer than max_num_seqs
	BasisEngineLimit = "engine_limit" // the engine's own batch limit (TensorRT-LLM's max_num_active_requests)
)

// busyRank orders the bases from strongest to weakest.
var busyRank = map[string]int{
	BasisForwardPass: 0, BasisBusyCounter: 0, BasisIdleCounter: 1, BasisOccupancy: 2,
	BasisPrefillTime: 3, BasisStepTime: 3, BasisSampled: 4,
}

// work is one instance's work over the window, read once per tick for the
// deployment's sums and its pool's: how busy it was, and for decode the
// batch it ran against the batch it can run.
type work struct {
	busy      float64 // the engines' mean busy fraction, 0..1
	busyBasis string  // "" when no signal gives it
	running   float64 // mean running batch over the window's samples
	hasRun    bool
	limit     float64 // the largest batch it can run
	limitBase string  // "" when not known
	kvHeld    float64 // the requests its KV cache holds; 0 when not known
	// step is the mean decode step over the window, seconds; 0 when
	// unknown.
	step float64
	// linkBusy is transfer-seconds per second of the connector's transfer
	// time histogram, and linkBytes the KV bytes/s moved over the same
	// samples: their ratio is one transfer's speed.
	linkBusy, linkBytes float64
	hasLink             bool
}

// work reads the instance's busy-time signals over the window.
func (r *instanceRead) work() work {
	var w work
	if r.why != "" {
		return w
	}
	w.busy, w.busyBasis = r.busyFraction()
	if r.role == engine.Decode {
		w.running, w.hasRun = r.gaugeMean(engine.Running)
		w.kvHeld = r.kvHeldBatch()
		w.step = r.stepTime()
		w.limit, w.limitBase = r.batchLimit(w.kvHeld)
	}
	if x, ok := r.t.histTotals(engine.KVXferTime.HistogramIndex(), r.now, r.window); ok && x.seconds > 0 && x.count > 0 && r.t.has(engine.KVBytes) {
		if b, _, _ := r.t.windowed(engine.KVBytes, r.now, r.window); b.OK() && b.V > 0 {
			w.linkBusy, w.linkBytes, w.hasLink = x.sum/x.seconds, b.V, true
		}
	}
	return w
}

// busyFraction is the instance's busy fraction over the window and its
// basis, from the strongest signal it exports.
func (r *instanceRead) busyFraction() (float64, string) {
	t := r.t
	// has first: a counter's absence costs its reason's string.
	if t.has(engine.ForwardPassSeconds) {
		if b := r.windowed(engine.ForwardPassSeconds); b.OK() {
			return clamp01(b.V / float64(max(t.seriesN[engine.ForwardPassSeconds], 1))), BasisForwardPass
		}
	}
	if t.has(engine.BusySeconds) {
		if b := r.windowed(engine.BusySeconds); b.OK() {
			return clamp01(b.V / float64(max(t.seriesN[engine.BusySeconds], 1))), BasisBusyCounter
		}
	}
	if t.has(engine.SchedulerIdle) {
		if idle := r.windowed(engine.SchedulerIdle); idle.OK() {
			ranks := float64(max(t.seriesN[engine.SchedulerIdle], 1))
			return clamp01(1 - idle.V/ranks), BasisIdleCounter
		}
	}
	if v, ok := r.occupancy(); ok {
		return v, BasisOccupancy
	}
	switch {
	case r.role == engine.Prefill && r.engine == engine.VLLM:
		if v, ok := r.prefillBusy(); ok {
			return v, BasisPrefillTime
		}
	case r.role == engine.Decode && r.engine == engine.VLLM:
		if v, ok := r.stepBusy(); ok {
			return v, BasisStepTime
		}
	}
	m := engine.ContextRequests
	if r.role == engine.Decode {
		m = engine.GenerationRequests
	}
	if v, ok := r.sampledBusy(m); ok {
		return v, BasisSampled
	}
	return 0, ""
}

// occupancy is the mean forward occupancy over the window's samples. SGLang
// clears the gauge (NaN) once an engine has run nothing: such a sample
// counts as idle.
func (r *instanceRead) occupancy() (float64, bool) {
	i := engine.ForwardOccupancy.GaugeIndex()
	var sum float64
	n, seen := 0, false
	r.eachSample(func(s *sample) {
		switch {
		case s.hasGauge[i]:
			sum += clamp01(s.gauges[i])
			n++
			seen = true
		case s.nonFiniteGauge[i]:
			n++
		}
	})
	if !seen || n < 2 {
		return 0, false
	}
	return sum / float64(n), true
}

// sampledBusy is the share of the window's samples in which an iteration
// had requests of gauge m: a sample of the busy fraction, not its
// measure, and the noisiest basis.
func (r *instanceRead) sampledBusy(m engine.Metric) (float64, bool) {
	i := m.GaugeIndex()
	n, busy := 0, 0
	r.eachSample(func(s *sample) {
		if s.hasGauge[i] {
			n++
			if s.gauges[i] > 0 {
				busy++
			}
		}
	})
	if n < 2 {
		return 0, false
	}
	return float64(busy) / float64(n), true
}

// prefillBusy is a vLLM prefill instance's busy fraction: each request of a
// step records the step's time as its prefill time, so the requests'
// prefill seconds are the busy seconds times the requests per step, which
// iteration_tokens_total counts (at least one: a prompt chunked over several
// steps is one request per step). Steps of unequal batches make it high by
// the batches' spread (docs/advisor.md#busy-time).
func (r *instanceRead) prefillBusy() (float64, bool) {
	pt, ok := r.t.histTotals(engine.PrefillTime.HistogramIndex(), r.now, r.window)
	if !ok || pt.seconds <= 0 {
		return 0, false
	}
	steps, ok := r.t.histTotals(engine.IterationTokens.HistogramIndex(), r.now, r.window)
	if !ok {
		return 0, false
	}
	if pt.count <= 0 {
		return 0, steps.count == 0 // steps without a prompt done: unknown
	}
	perStep := 1.0
	if steps.count > 0 && pt.count > steps.count {
		perStep = pt.count / steps.count
	}
	return clamp01(pt.sum / pt.seconds / perStep), true
}

// stepBusy is a vLLM decode instance's busy fraction: its steps
// (iteration_tokens_total's count) times the mean time between tokens,
// which is a step's.
func (r *instanceRead) stepBusy() (float64, bool) {
	steps, ok := r.t.histTotals(engine.IterationTokens.HistogramIndex(), r.now, r.window)
	if !ok || steps.seconds <= 0 {
		return 0, false
	}
	itl, ok := r.t.histTotals(engine.ITL.HistogramIndex(), r.now, r.window)
	if !ok || itl.count <= 0 {
		return 0, ok && steps.count == 0 // no step, or steps without a time
	}
	return clamp01(steps.count * itl.sum / itl.count / steps.seconds), true
}

// batchLimit is the largest batch a decode instance can run and its basis:
// the configured max_num_seqs, else the limit the engine exports
// (TensorRT-LLM's max_num_active_requests), or the requests its KV cache
// holds where that is fewer (docs/advisor.md#decode-batch). The cache
// alone gives no limit: the engine's own batch limit may be below it.
func (r *instanceRead) batchLimit(kvHeld float64) (float64, string) {
	n, basis := float64(r.t.maxNumSeqs), BasisMaxNumSeqs
	if n <= 0 {
		if v, ok := r.gaugeMean(engine.MaxActiveRequests); ok && v >= 1 {
			n, basis = v, BasisEngineLimit
		}
	}
	switch {
	case n <= 0:
		return 0, ""
	case kvHeld > 0 && kvHeld < n:
		return kvHeld, BasisKVCache
	}
	return n, basis
}

// kvHeldBatch is the requests a decode instance's KV cache holds at once:
// its tokens (blocks × block size) over a running request's, which is its
// prompt and on average half its output, and half a block its last block
// leaves empty; the prompt and output from the tokens and requests done
// over the window. 0 when a signal is missing. The cache's used share is no
// guide: requests waiting for their KV hold cache too, and a cache full of
// them would read as a small batch.
func (r *instanceRead) kvHeldBatch() float64 {
	blocks, ok := r.gaugeMean(engine.KVBlocks)
	if !ok || blocks <= 0 {
		return 0
	}
	size, ok := r.gaugeMean(engine.KVBlockSize)
	if !ok || size <= 0 {
		return 0
	}
	done, prompt, output := r.windowed(engine.Completed), r.windowed(engine.PromptTokens), r.windowed(engine.GenerationTokens)
	if !done.OK() || done.V <= 0 || !prompt.OK() || !output.OK() {
		return 0
	}
	perRequest := (prompt.V+output.V/2)/done.V + size/2
	return blocks * size / perRequest
}

// stepTime is a decode instance's mean step over the window: the mean
// time between a request's tokens, else TensorRT-LLM's iteration loop time
// or latency (in overlap mode about two loops: the fit of steps against
// batches reads only their ratio). 0 when none is exported.
func (r *instanceRead) stepTime() float64 {
	if x, ok := r.t.histTotals(engine.ITL.HistogramIndex(), r.now, r.window); ok && x.count > 0 {
		return x.sum / x.count
	}
	for _, m := range [...]engine.Metric{engine.IterationLoop, engine.IterationLatency} {
		if v, ok := r.gaugeMean(m); ok && v > 0 {
			return v
		}
	}
	return 0
}

// gaugeMean is gauge m's mean over the window's samples.
func (r *instanceRead) gaugeMean(m engine.Metric) (float64, bool) {
	i := m.GaugeIndex()
	var sum float64
	n := 0
	r.eachSample(func(s *sample) {
		if s.hasGauge[i] {
			sum += s.gauges[i]
			n++
		}
	})
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// eachSample calls f on the samples inside (now−W, now], newest first.
func (r *instanceRead) eachSample(f func(*sample)) {
	t := r.t
	from := r.now.Add(-r.window)
	for i := 0; i < t.n; i++ {
		s := t.at(i)
		if s.t.After(r.now) {
			continue
		}
		if !s.t.After(from) {
			return
		}
		f(s)
	}
}

func clamp01(v float64) float64 { return min(max(v, 0), 1) }

// parseMaxNumSeqs reads the LabelMaxNumSeqs label; 0 when absent or not a
// positive integer (the configuration validates what it writes).
func parseMaxNumSeqs(labels map[string]string) int {
	n, err := strconv.Atoi(labels[LabelMaxNumSeqs])
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// workSum adds up the work of a stage's instances.
type workSum struct {
	busy            float64
	busyOf          int
	basis           string
	running, limit  float64
	runOf, limitOf  int
	limitBasis      string
	kvHeld          float64
	kvHeldOf        int
	step            float64
	stepOf          int
	linkBusy, bytes float64
	linkOf          int
}

func (s *workSum) add(w *work) {
	if w.busyBasis != "" {
		s.busy += w.busy
		s.busyOf++
		if s.basis == "" || busyRank[w.busyBasis] > busyRank[s.basis] {
			s.basis = w.busyBasis
		}
	}
	if w.hasRun {
		s.running += w.running
		s.runOf++
	}
	if w.limitBase != "" {
		s.limit += w.limit
		s.limitOf++
		// An instance held back by its cache names the stage's limit.
		if s.limitBasis != BasisKVCache {
			s.limitBasis = w.limitBase
		}
	}
	if w.kvHeld > 0 {
		s.kvHeld += w.kvHeld
		s.kvHeldOf++
	}
	if w.step > 0 {
		s.step += w.step
		s.stepOf++
	}
}

func (s *workSum) addLink(w *work) {
	if w.hasLink {
		s.linkBusy += w.linkBusy
		s.bytes += w.linkBytes
		s.linkOf++
	}
}

// set writes the stage's work into sp; up is its instances up.
func (s *workSum) set(sp *StagePoint, role string) {
	switch {
	case s.busyOf == 0:
		sp.Busy = Absent("no busy time")
	case s.busyOf < sp.Up:
		sp.Busy = Absent(strconv.Itoa(sp.Up-s.busyOf) + " of " + strconv.Itoa(sp.Up) + " " + role + " instances export no busy-time signal")
	default:
		sp.Busy, sp.BusyBasis = Val(s.busy), s.basis
	}
	if role != "decode" {
		return
	}
	b := &Batch{}
	switch {
	case s.runOf == 0 || s.runOf < sp.Up:
		b.Running = Absent("no running gauge")
	default:
		b.Running = Val(s.running)
	}
	switch {
	case s.limitOf == 0 && s.kvHeldOf == sp.Up && sp.Up > 0:
		b.Limit = Absent("max_num_seqs not set (the KV caches hold " + strconv.FormatFloat(s.kvHeld, 'f', 0, 64) + " requests: the batch limit is that or less)")
	case s.limitOf == 0:
		b.Limit = Absent("max_num_seqs not set")
	case s.limitOf < sp.Up:
		b.Limit = Absent(strconv.Itoa(sp.Up-s.limitOf) + " of " + strconv.Itoa(sp.Up) + " decode instances have no batch limit")
	default:
		b.Limit, b.LimitBasis = Val(s.limit), s.limitBasis
	}
	switch {
	case s.stepOf == 0:
		b.Step = Absent("no step time (inter-token latency or iteration time) in the window")
	case s.stepOf < sp.Up:
		b.Step = Absent(strconv.Itoa(sp.Up-s.stepOf) + " of " + strconv.Itoa(sp.Up) + " decode instances have no step time in the window")
	default:
		b.Step = Val(s.step / float64(s.stepOf))
	}
	sp.Batch = b
}

// setLink writes the KV stage's transfer busy time into kp.
func (s *workSum) setLink(kp *KVPoint) {
	if s.linkOf == 0 {
		kp.LinkBusy = Absent("no KV transfer time histogram")
		kp.LinkBytes = kp.LinkBusy
		return
	}
	kp.LinkBusy, kp.LinkBytes, kp.Links = Val(s.linkBusy), Val(s.bytes), s.linkOf
}
