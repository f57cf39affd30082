package sim

import (
	"encoding/json"
	"fmt"
	"time"
)

// TensorRT-LLM's JSON iteration statistics (docs/trtllm.md#iteration-statistics): every modelled
// iteration of a TensorRT-LLM worker (a context batch finishing, a
// generation step, or the loop that notices a KV transfer has completed)
// builds one record per attention-DP rank, queued until a GET /metrics
// drains them. The records only observe the model; counts in them add up to
// the same ground truth as the Prometheus counters.

const (
	trtTokensPerBlock  = 32
	trtDefaultQueueMax = 1000
	// trtTimestampLayout is Python's "%m-%d-%Y %H:%M:%S.%f".
	trtTimestampLayout = "01-02-2006 15:04:05.000000"
	trtGPUMemBytes     = 64424509440 // 60 GiB, constant
)

// trtInstance is the iteration-stats state of one TensorRT-LLM worker
// process; a restart (instance.restarts changing) starts a fresh one.
type trtInstance struct {
	proc    int        // instance.restarts this state belongs to
	iter    int64      // iterations run by this process
	seq     int64      // statsSequence of the next record
	dropped int64      // records dropped from the full queue so far
	queue   []trtFrame // live records are queue[head:]
	head    int

	// Accumulated since the last built record (iter_stats_interval > 1
	// carries skipped iterations into the next record).
	pendNew  int
	pendReqs []trtReqStat
	lastDone uint64 // completions (all ranks) when the last record was built

	kv      []trtKVCum // per rank, cumulative since the process started
	scratch []*request // decode-step snapshot
	wallOff time.Duration
}

type trtKVCum struct{ allocTotal, allocNew, reused, missed int64 }

// trtFrame is one record before fan-out: instant, latency and the
// instance-wide (rank-0-owned) values; rows carry the per-rank values.
type trtFrame struct {
	at            int64 // model time
	iter, seq     int64
	dropped       int64
	latencyMS     float64
	newActive     int
	queued        int
	completed     int
	rows          []trtRow
	reqs          []trtReqStat
	queuedCtx     int
	queuedCtxToks int
	queuedGen     int
}

type trtRow struct {
	active, ctxReqs, genReqs int
	ctxTokens, genKVTokens   int
	kvMax, kvUsed            int
	kv                       trtKVCum
}

func newTRTInstance() *trtInstance { return &trtInstance{} }

// sync resets the state when the worker process restarted.
func (t *trtInstance) sync(in *instance) {
	if t.proc == in.restarts && t.kv != nil {
		return
	}
	off := t.wallOff
	*t = trtInstance{proc: in.restarts, kv: make([]trtKVCum, len(in.engines)), wallOff: off}
}

func trtBlocks(tokens int) int { return (tokens + trtTokensPerBlock - 1) / trtTokensPerBlock }

// trtPrefillDone runs prefillDone (the profile's hand-off: trtllm-serve
// disaggregated sends the context-only request first and hands it to a gen
// worker once the ctx worker answered) and records the context iteration.
func (m *Model) trtPrefillDone(p *engine) {
	batch := append([]*request(nil), p.batch...)
	var latency int64
	if len(batch) > 0 {
		latency = m.now - batch[0].pStart
	}
	m.prefillDone(p)

	t := p.inst.trt
	t.sync(p.inst)
	S := m.sc.InputTokens
	bpr := trtBlocks(S)
	var reqs []trtReqStat
	for _, r := range batch {
		if r.aborted {
			continue
		}
		kv := &t.kv[p.idx]
		kv.allocTotal += int64(bpr)
		kv.allocNew += int64(bpr)
		kv.missed += int64(bpr)
		reqs = append(reqs, trtReqStat{
			ID: trtDisaggID(r), Stage: "CONTEXT_IN_PROGRESS", ContextPrefillPosition: S,
			NumGeneratedTokens: 1, AvgNumDecodedTokensPerIter: 1, Scheduled: true,
			AllocTotalBlocksPerRequest: bpr, AllocNewBlocksPerRequest: bpr, MissedBlocksPerRequest: bpr,
		})
	}
	m.trtIteration(p, latency, reqs, len(reqs))
}

// trtTransferDone: the ctx worker's loop notices the finished transfer; the
// request's stats carry disServingStats with the bytes sent.
func (m *Model) trtTransferDone(p *engine, r *request) {
	t := p.inst.trt
	t.sync(p.inst)
	S := m.sc.InputTokens
	bpr := trtBlocks(S)
	rs := trtReqStat{
		ID: trtDisaggID(r), Stage: "GENERATION_COMPLETE", ContextPrefillPosition: S,
		NumGeneratedTokens: 1, AvgNumDecodedTokensPerIter: 1, Scheduled: true,
		DisServingStats: &trtDisServing{
			KVCacheTransferMS: float64(m.now-r.xferStart) / 1e6,
			KVCacheSize:       p.inst.grp.spec.BytesPerRequest(m.sc),
		},
		AllocTotalBlocksPerRequest: bpr, AllocNewBlocksPerRequest: bpr, MissedBlocksPerRequest: bpr,
	}
	m.trtIteration(p, int64(100*time.Microsecond), []trtReqStat{rs}, 0)
}

// trtDecodeStep runs one generation step and notes which requests got their
// first token or finished in it; finished ones become perf records.
func (m *Model) trtDecodeStep(d *engine) {
	t := d.inst.trt
	t.sync(d.inst)
	prev := append(t.scratch[:0], d.running...)
	step := d.stepNs // the step that ends now; decodeStep sets the next one's
	m.decodeStep(d)
	O := m.sc.OutputTokens
	S := m.sc.InputTokens
	var reqs []trtReqStat
	newActive := 0
	for i, r := range prev {
		prev[i] = nil
		switch {
		case r.generated >= O:
			m.trtDone = append(m.trtDone, trtRecordOf(r, d, m.now))
			reqs = append(reqs, trtReqStat{
				ID: trtDisaggID(r), Stage: "GENERATION_COMPLETE", ContextPrefillPosition: S,
				NumGeneratedTokens: r.generated, AvgNumDecodedTokensPerIter: 1, Scheduled: true,
			})
		case r.generated == 1:
			reqs = append(reqs, trtReqStat{
				ID: trtDisaggID(r), Stage: "GENERATION_IN_PROGRESS", ContextPrefillPosition: S,
				NumGeneratedTokens: 1, AvgNumDecodedTokensPerIter: 1, Scheduled: true,
			})
		default:
			continue
		}
		if r.generated == 1 { // first token in this step: newly active
			newActive++
			b := trtBlocks(S + O)
			kv := &t.kv[d.idx]
			kv.allocTotal += int64(b)
			kv.allocNew += int64(b)
			kv.missed += int64(b)
			reqs[len(reqs)-1].AllocTotalBlocksPerRequest = b
			reqs[len(reqs)-1].AllocNewBlocksPerRequest = b
			reqs[len(reqs)-1].MissedBlocksPerRequest = b
		}
	}
	t.scratch = prev[:0]
	m.trtIteration(d, step, reqs, newActive)
}

// trtIteration counts one iteration of engine e's worker and builds a
// record every iter_stats_interval iterations.
func (m *Model) trtIteration(e *engine, latency int64, reqs []trtReqStat, newActive int) {
	in := e.inst
	t := in.trt
	t.sync(in)
	e.stats.LastIterSec = float64(latency) / 1e9
	t.iter++
	t.pendNew += newActive
	t.pendReqs = append(t.pendReqs, reqs...)
	spec := in.grp.spec.TRTLLM
	if n := int64(max(spec.IterStatsInterval, 1)); t.iter%n != 0 {
		return
	}
	var done uint64
	for _, x := range in.engines {
		for _, v := range x.stats.Finished {
			done += v
		}
	}
	f := trtFrame{
		at: m.now, iter: t.iter, seq: t.seq,
		latencyMS: float64(latency) / 1e6, newActive: t.pendNew,
		completed: int(done - t.lastDone), reqs: t.pendReqs,
	}
	t.seq++
	t.lastDone = done
	t.pendNew, t.pendReqs = 0, nil
	S, O := m.sc.InputTokens, m.sc.OutputTokens
	for k, x := range in.engines {
		var row trtRow
		if x.role == RolePrefill {
			row.active = len(x.batch)
			row.ctxReqs = len(x.batch)
			row.ctxTokens = len(x.batch) * S
			row.kvMax = in.grp.spec.Prefill.KVSlots * (trtBlocks(S) + 1)
			row.kvUsed = x.slotsUsed * trtBlocks(S)
			f.queued += len(x.waiting) + len(x.bootstrap)
			f.queuedCtx += len(x.waiting)
		} else {
			row.active = len(x.running)
			row.genReqs = len(x.running)
			row.kvMax = in.grp.spec.Decode.KVSlots * trtBlocks(S+O)
			row.kvUsed = x.dSlots * trtBlocks(S)
			for _, r := range x.running {
				row.kvUsed += trtBlocks(r.generated)
				row.genKVTokens += S + r.generated
			}
			f.queued += len(x.prealloc) + len(x.receiving) + len(x.ready)
			f.queuedGen += len(x.ready)
		}
		row.kv = t.kv[k]
		f.rows = append(f.rows, row)
	}
	f.queuedCtxToks = f.queuedCtx * S
	limit := spec.IterStatsMax
	if limit <= 0 {
		limit = trtDefaultQueueMax
	}
	for len(t.queue)-t.head >= limit { // full: drop the oldest
		t.queue[t.head] = trtFrame{}
		t.head++
		t.dropped++
	}
	if t.head > 0 && t.head >= len(t.queue)/2 { // compact, amortised O(1)
		n := copy(t.queue, t.queue[t.head:])
		clear(t.queue[n:])
		t.queue, t.head = t.queue[:n], 0
	}
	f.dropped = t.dropped // including the one dropped to make room for f
	t.queue = append(t.queue, f)
}

// JSON shapes, in the key order of iteration_stats.py.
type trtIterJSON struct {
	Timestamp                       string         `json:"timestamp"`
	Iter                            int64          `json:"iter"`
	IterLatencyMS                   float64        `json:"iterLatencyMS"`
	HostStepTimeMS                  float64        `json:"hostStepTimeMS"`
	NewActiveRequestsQueueLatencyMS float64        `json:"newActiveRequestsQueueLatencyMS"`
	NumNewActiveRequests            int            `json:"numNewActiveRequests"`
	NumActiveRequests               int            `json:"numActiveRequests"`
	NumQueuedRequests               int            `json:"numQueuedRequests"`
	NumCompletedRequests            int            `json:"numCompletedRequests"`
	MaxNumActiveRequests            int            `json:"maxNumActiveRequests"`
	MaxBatchSizeStatic              int            `json:"maxBatchSizeStatic"`
	MaxBatchSizeTunerRecommended    int            `json:"maxBatchSizeTunerRecommended"`
	MaxBatchSizeRuntime             int            `json:"maxBatchSizeRuntime"`
	MaxNumTokensStatic              int            `json:"maxNumTokensStatic"`
	MaxNumTokensTunerRecommended    int            `json:"maxNumTokensTunerRecommended"`
	MaxNumTokensRuntime             int            `json:"maxNumTokensRuntime"`
	GPUMemUsage                     int64          `json:"gpuMemUsage"`
	CPUMemUsage                     int64          `json:"cpuMemUsage"`
	PinnedMemUsage                  int64          `json:"pinnedMemUsage"`
	KVCacheStats                    trtKVCacheJSON `json:"kvCacheStats"`
	StaticBatchingStats             trtStaticJSON  `json:"staticBatchingStats"`
	InflightBatchingStats           trtIFBJSON     `json:"inflightBatchingStats"`
	SpecDecodingStats               *struct{}      `json:"specDecodingStats"`
	SchedulerMode                   string         `json:"schedulerMode"`
	StatsSequence                   int64          `json:"statsSequence"`
	StatsDroppedFrames              int64          `json:"statsDroppedFrames"`
	Rank                            int            `json:"rank"`
	AttentionDpRank                 int            `json:"attentionDpRank"`
	RequestStats                    *[]trtReqStat  `json:"requestStats,omitempty"`
}

type trtKVCacheJSON struct {
	MaxNumBlocks     int     `json:"maxNumBlocks"`
	FreeNumBlocks    int     `json:"freeNumBlocks"`
	UsedNumBlocks    int     `json:"usedNumBlocks"`
	TokensPerBlock   int     `json:"tokensPerBlock"`
	AllocTotalBlocks int64   `json:"allocTotalBlocks"`
	AllocNewBlocks   int64   `json:"allocNewBlocks"`
	ReusedBlocks     int64   `json:"reusedBlocks"`
	MissedBlocks     int64   `json:"missedBlocks"`
	CacheHitRate     float64 `json:"cacheHitRate"`
}

type trtStaticJSON struct {
	NumScheduledRequests int `json:"numScheduledRequests"`
	NumContextRequests   int `json:"numContextRequests"`
	NumCtxTokens         int `json:"numCtxTokens"`
	NumGenTokens         int `json:"numGenTokens"`
	EmptyGenSlots        int `json:"emptyGenSlots"`
}

type trtIFBJSON struct {
	NumScheduledRequests       int     `json:"numScheduledRequests"`
	NumContextRequests         int     `json:"numContextRequests"`
	NumGenRequests             int     `json:"numGenRequests"`
	NumPausedRequests          int     `json:"numPausedRequests"`
	NumCtxTokens               int     `json:"numCtxTokens"`
	MicroBatchID               int     `json:"microBatchId"`
	AvgNumDecodedTokensPerIter float64 `json:"avgNumDecodedTokensPerIter"`
	NumCtxKvTokens             int     `json:"numCtxKvTokens"`
	NumGenKvTokens             int     `json:"numGenKvTokens"`
	NumQueuedContextRequests   int     `json:"numQueuedContextRequests"`
	NumQueuedCtxTokens         int     `json:"numQueuedCtxTokens"`
	NumQueuedGenRequests       int     `json:"numQueuedGenRequests"`
	NumQueuedGenKvTokens       int     `json:"numQueuedGenKvTokens"`
	NumPausedKvTokens          int     `json:"numPausedKvTokens"`
}

// trtReqStat is one requestStats entry; ID is the disagg request id (a
// disaggregated worker's executor uses it as its request id).
type trtReqStat struct {
	ID                         uint64         `json:"id"`
	Stage                      string         `json:"stage"`
	ContextPrefillPosition     int            `json:"contextPrefillPosition"`
	NumGeneratedTokens         int            `json:"numGeneratedTokens"`
	AvgNumDecodedTokensPerIter float64        `json:"avgNumDecodedTokensPerIter"`
	Scheduled                  bool           `json:"scheduled"`
	Paused                     bool           `json:"paused"`
	DisServingStats            *trtDisServing `json:"disServingStats"`
	AllocTotalBlocksPerRequest int            `json:"allocTotalBlocksPerRequest"`
	AllocNewBlocksPerRequest   int            `json:"allocNewBlocksPerRequest"`
	ReusedBlocksPerRequest     int            `json:"reusedBlocksPerRequest"`
	MissedBlocksPerRequest     int            `json:"missedBlocksPerRequest"`
	KVCacheHitRatePerRequest   float64        `json:"kvCacheHitRatePerRequest"`
}

type trtDisServing struct {
	KVCacheTransferMS float64 `json:"kvCacheTransferMS"`
	KVCacheSize       int64   `json:"kvCacheSize"`
}

// IterationStats drains the named TensorRT-LLM instance's iteration-stats
// queue as of Now and appends it to dst as a JSON array (one element per
// record and attention-DP rank; "[]" when empty). A second call at the same
// instant returns "[]".
func (m *Model) IterationStats(name string, dst []byte) ([]byte, error) {
	in := m.byName[name]
	if in == nil {
		return dst, fmt.Errorf("unknown instance %q", name)
	}
	if in.trt == nil {
		return dst, fmt.Errorf("%s is not a TensorRT-LLM instance", name)
	}
	if in.down {
		return dst, fmt.Errorf("%s: %w", name, errDown)
	}
	t := in.trt
	t.sync(in)
	rows := make([]trtIterJSON, 0, (len(t.queue)-t.head)*len(in.engines))
	for i := t.head; i < len(t.queue); i++ {
		f := &t.queue[i]
		ts := m.epoch.Add(time.Duration(f.at) + t.wallOff).Local().Format(trtTimestampLayout)
		for k, r := range f.rows {
			j := trtIterJSON{
				// The iteration's own time: in overlap mode iterLatencyMS
				// would span about two (docs/trtllm.md).
				Timestamp: ts, Iter: f.iter, IterLatencyMS: f.latencyMS, HostStepTimeMS: f.latencyMS,
				NumActiveRequests: r.active, MaxNumActiveRequests: trtMaxActive(in.grp.spec, in.role),
				GPUMemUsage: trtGPUMemBytes,
				KVCacheStats: trtKVCacheJSON{
					MaxNumBlocks: r.kvMax, FreeNumBlocks: r.kvMax - r.kvUsed, UsedNumBlocks: r.kvUsed,
					TokensPerBlock: trtTokensPerBlock, AllocTotalBlocks: r.kv.allocTotal,
					AllocNewBlocks: r.kv.allocNew, ReusedBlocks: r.kv.reused, MissedBlocks: r.kv.missed,
				},
				InflightBatchingStats: trtIFBJSON{
					NumScheduledRequests: r.active, NumContextRequests: r.ctxReqs, NumGenRequests: r.genReqs,
					NumCtxTokens: r.ctxTokens, AvgNumDecodedTokensPerIter: 1,
					NumCtxKvTokens: r.ctxTokens, NumGenKvTokens: r.genKVTokens,
				},
				SchedulerMode: "overlap", StatsSequence: f.seq, StatsDroppedFrames: f.dropped,
				Rank: k, AttentionDpRank: k,
			}
			if r.genReqs == 0 {
				j.InflightBatchingStats.AvgNumDecodedTokensPerIter = 0
			}
			if k == 0 { // rank-0-owned fields; the other ADP rows carry zeros
				j.NewActiveRequestsQueueLatencyMS = 0.05 * float64(f.newActive)
				j.NumNewActiveRequests = f.newActive
				j.NumQueuedRequests = f.queued
				j.NumCompletedRequests = f.completed
				j.InflightBatchingStats.NumQueuedContextRequests = f.queuedCtx
				j.InflightBatchingStats.NumQueuedCtxTokens = f.queuedCtxToks
				j.InflightBatchingStats.NumQueuedGenRequests = f.queuedGen
				reqs := f.reqs
				if reqs == nil {
					reqs = []trtReqStat{}
				}
				j.RequestStats = &reqs
			}
			rows = append(rows, j)
		}
	}
	clear(t.queue)
	t.queue, t.head = t.queue[:0], 0
	b, err := json.Marshal(rows)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// setTRTLLMWallOffset shifts the host wall clock of a TensorRT-LLM
// instance's iteration-stats timestamps.
func (m *Model) setTRTLLMWallOffset(name string, off time.Duration) {
	if in := m.byName[name]; in != nil && in.trt != nil {
		in.trt.wallOff = off
	}
}
