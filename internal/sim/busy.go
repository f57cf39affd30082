package sim

import (
	"math"
	"sort"
	"time"

	"github.com/ptdmon/ptdmon/internal/stage"
)

// busyLog keeps when an engine worked: a prefill engine while it computes a
// batch, a decode engine while it runs a step. Back-to-back work is one
// interval, so a saturated engine costs one interval, an idle one none, and
// the busy time up to any instant is a binary search away.
type busyLog struct {
	start, end []int64 // closed intervals, in order, not overlapping
	cum        []int64 // cum[i]: busy time of intervals 0..i
	open       int64   // start of the work under way, if working
	working    bool
}

// begin starts work at t (nothing if work is already under way).
func (b *busyLog) begin(t int64) {
	if !b.working {
		b.working, b.open = true, t
	}
}

// stop ends the work under way at t.
func (b *busyLog) stop(t int64) {
	if !b.working {
		return
	}
	b.working = false
	if t <= b.open {
		return
	}
	n := len(b.end)
	if n > 0 && b.end[n-1] == b.open { // back to back: one interval
		b.end[n-1] = t
		b.cum[n-1] += t - b.open
		return
	}
	var prev int64
	if n > 0 {
		prev = b.cum[n-1]
	}
	b.start = append(b.start, b.open)
	b.end = append(b.end, t)
	b.cum = append(b.cum, prev+t-b.open)
}

// at is the busy time up to t (t at most the model's now), the work under
// way included up to t.
func (b *busyLog) at(t int64) int64 {
	i := sort.Search(len(b.end), func(i int) bool { return b.end[i] > t })
	var busy int64
	if i > 0 {
		busy = b.cum[i-1]
	}
	if i < len(b.start) && b.start[i] < t {
		busy += t - b.start[i]
	}
	if b.working && b.open < t {
		busy += t - b.open
	}
	return busy
}

// occupancyWindow is the span SGLang's forward occupancy averages over:
// its decode log interval (40 batches) at the default step time, 1 s.
const occupancyWindow = int64(time.Second)

// refreshBusy fills e's busy-time gauges and counters as of now, for the
// process that started at up: busy and elapsed seconds since, the busy
// share of the last occupancy window (NaN when it ran nothing, as SGLang
// clears fwd_occupancy once idle), and the KV cache in blocks.
func (m *Model) refreshBusy(in *instance, e *engine) {
	s := e.stats
	up := in.upAt[len(in.upAt)-1]
	busy := e.work.at(m.now) - e.work.at(up)
	s.Elapsed = float64(m.now-up) / 1e9
	s.Busy = float64(busy) / 1e9
	s.Idle = float64(m.now-up-busy) / 1e9
	from := max(m.now-occupancyWindow, up)
	s.Occupancy = math.NaN()
	if w := e.work.at(m.now) - e.work.at(from); w > 0 {
		s.Occupancy = float64(w) / float64(m.now-from)
	}
	s.KVBlockTokens, s.KVBlocksMax, s.KVBlocksUsed = m.kvBlocks(in, e)
	if e.role == RolePrefill {
		s.CtxReqs, s.GenReqs = len(e.batch), 0
	} else {
		s.CtxReqs, s.GenReqs = 0, len(e.running)
	}
}

// vllmBlockTokens is vLLM's default block size (CacheConfig.block_size).
const vllmBlockTokens = 16

// kvBlocks is e's KV cache in blocks: tokens per block (TensorRT-LLM's 32,
// else vLLM's 16), the cache's size and the blocks held. A prefill slot
// holds a prompt, a decode slot a prompt and its output; TensorRT-LLM's
// are the iteration statistics' maxNumBlocks and usedNumBlocks.
func (m *Model) kvBlocks(in *instance, e *engine) (size, total, used int) {
	S, O := m.sc.InputTokens, m.sc.OutputTokens
	spec := in.grp.spec
	if in.trt != nil {
		if e.role == RolePrefill {
			return trtTokensPerBlock, spec.Prefill.KVSlots * (trtBlocks(S) + 1), e.slotsUsed * trtBlocks(S)
		}
		used = e.dSlots * trtBlocks(S)
		for _, r := range e.running {
			used += trtBlocks(r.generated)
		}
		return trtTokensPerBlock, spec.Decode.KVSlots * trtBlocks(S+O), used
	}
	blocks := func(tokens int) int { return (tokens + vllmBlockTokens - 1) / vllmBlockTokens }
	if e.role == RolePrefill {
		return vllmBlockTokens, spec.Prefill.KVSlots * blocks(S), e.slotsUsed * blocks(S)
	}
	used = e.dSlots * blocks(S)
	for _, r := range e.running {
		used += blocks(r.generated)
	}
	return vllmBlockTokens, spec.Decode.KVSlots * blocks(S+O), used
}

// CapacityTruth is one stage's true capacity in one group: what one engine
// of the stage completes per second when saturated (Group.CapacityPerEngine:
// prefill tokens_per_sec ÷ S, KV bandwidth ÷ B_request, decode max_batch ÷
// (O × step_time)) and the engines of the stage (the KV links are the
// prefill engines').
type CapacityTruth struct {
	Group           string  `json:"group"`
	Stage           string  `json:"stage"`
	PerEnginePerSec float64 `json:"per_engine_per_sec"`
	Engines         int     `json:"engines"`
}

// capacityTruth lists every group's stages.
func (m *Model) capacityTruth() []CapacityTruth {
	var out []CapacityTruth
	for _, g := range m.groups {
		p, kv, d := g.spec.CapacityPerEngine(m.sc)
		out = append(out,
			CapacityTruth{g.spec.Name, string(stage.Prefill), p, len(g.prefill)},
			CapacityTruth{g.spec.Name, string(stage.KV), kv, len(g.prefill)},
			CapacityTruth{g.spec.Name, string(stage.Decode), d, len(g.decode)})
	}
	return out
}

// busySeconds is the engine-seconds in's engines worked up to t.
func (in *instance) busySeconds(t int64) float64 {
	var ns int64
	for _, e := range in.engines {
		ns += e.work.at(t)
	}
	return float64(ns) / 1e9
}

// MaxNumSeqs is the named decode instance's batch limit over its engines;
// 0 for a prefill instance or an unknown name.
func (m *Model) MaxNumSeqs(name string) int {
	in := m.byName[name]
	if in == nil || in.role != RoleDecode {
		return 0
	}
	return in.grp.spec.Decode.MaxBatch * len(in.engines)
}
