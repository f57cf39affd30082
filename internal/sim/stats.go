package sim

import (
	"slices"
	"sort"

	"github.com/ptdmon/ptdmon/internal/sim/kvstats"
)

// Histogram is a cumulative Prometheus-style histogram with fixed bounds.
// counts[i] is the non-cumulative count of bucket i (len(bounds)+1, the last
// is +Inf); renderers accumulate.
type Histogram struct {
	tbl    *bucketTable
	counts []uint64
	sum    float64
	count  uint64
}

func newHistogram(t *bucketTable) Histogram {
	return Histogram{tbl: t, counts: make([]uint64, len(t.bounds)+1)}
}

func (h *Histogram) observe(v float64) { h.observeN(v, 1) }

// observeN records n identical observations; decode steps use it for the n
// inter-token gaps of one batch step.
func (h *Histogram) observeN(v float64, n uint64) {
	if n == 0 {
		return
	}
	if h.tbl != nil { // a histogram without buckets keeps sum and count
		// Bucket i holds v <= bounds[i] (Prometheus "le").
		h.counts[sort.SearchFloat64s(h.tbl.bounds, v)] += n
	}
	h.sum += v * float64(n)
	h.count += n
}

// Count and Sum expose totals for tests and truth cross-checks.
func (h *Histogram) Count() uint64 { return h.count }
func (h *Histogram) Sum() float64  { return h.sum }

// Finish reasons in vLLM's FINISH_REASON_STRINGS order.
var finishReasons = [...]string{"stop", "length", "abort", "error", "repetition"}

// FinishReasons names the entries of EngineStats.Finished, in its order, for
// the Format of an engine registered outside this package.
func FinishReasons() []string { return slices.Clone(finishReasons[:]) }

const (
	reasonStop   = 0
	reasonLength = 1
)

// EngineStats is what one engine process exports: counters since the
// process started, plus gauges refreshed from model state before rendering.
// One struct serves every format; a format renders the fields its engine has.
type EngineStats struct {
	Index   int     // vLLM engine="i", SGLang dp_rank
	PID     int     // SGLang multiprocess pid label
	Created float64 // unix seconds the process started (vLLM _created)

	// Gauges (filled by Model.refresh just before rendering).
	Running, Waiting             int
	WaitCapacity, WaitDeferred   int // Waiting by reason (vLLM)
	Bootstrap, Inflight          int
	Prealloc, TransferQueue      int
	KVUsage                      float64
	UsedTokens                   int
	GenThroughput                float64
	Queued                       int     // SGLang waiting queue (num_queue_reqs)
	LastKVMB, LastKVMs, LastKVGB float64 // old SGLang gauges: last transfer

	// Busy time (busy.go): seconds since the process started and the
	// seconds of them the engine worked; Occupancy, its busy share of the
	// last second (NaN when it ran nothing); Idle, the rest of Elapsed,
	// taken in whole nanoseconds so that it never steps back.
	Elapsed, Busy, Idle, Occupancy float64
	// The requests of the batch under way by phase, and the KV cache in
	// blocks of KVBlockTokens tokens.
	CtxReqs, GenReqs                         int
	KVBlockTokens, KVBlocksMax, KVBlocksUsed int
	// LastIterSec: the latency of the newest iteration (TensorRT-LLM's
	// iteration statistics, iterstats.go).
	LastIterSec float64

	// Counters.
	Finished        [len(finishReasons)]uint64
	Requests        uint64 // SGLang num_requests_total
	PromptTokens    uint64
	GenTokens       uint64
	PrefixQueries   uint64
	PrefixHits      uint64
	Preemptions     uint64
	BootstrapFailed uint64
	TransferFailed  uint64
	Recomputed      uint64 // vLLM decode: prompt tokens it computed itself (failures.go)
	Shed            uint64 // requests its server refused before queueing them (shed.go)

	// Request histograms (bucket layouts from the engine's profile).
	TTFT, ITL, E2E                Histogram
	QueueTime, PrefillTime        Histogram
	DecodeTime, InferenceTime     Histogram
	PromptLen, GenLen             Histogram
	XferTime, PostTime            Histogram // vLLM connectors, seconds
	XferBytes, XferDescs          Histogram
	KVMB, KVLatencyMs, KVSpeedGBs Histogram // SGLang, per request
	// Stages: SGLang's per-stage latency on prefill (phases.go).
	Stages [4]Histogram
	// IterTokens: tokens per step (a prefill batch, a decode step).
	IterTokens Histogram

	// KV is the connector's cumulative counters; refreshed from kv.
	KV kvstats.Snapshot
	kv *kvstats.Stats
}

func newEngineStats(p *Profile, index, threads int, created float64, pid int) *EngineStats {
	es := &EngineStats{Index: index, PID: pid, Created: created, kv: kvstats.New(threads)}
	if p.Histograms != nil {
		p.Histograms(es)
	}
	return es
}
