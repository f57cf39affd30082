// Package engine turns the raw samples of one engine's /metrics into a
// canonical observation of that instance: which role it plays, its counters
// by source series, its gauges and its histograms, whatever the engine
// (vLLM, SGLang, TensorRT-LLM) and its KV connector (FlagCX, NIXL,
// Mooncake, Dynamo) call them. Each engine and connector is a table
// registered from its own file; docs/adapters.md describes the contract.
package engine

// Metric is a canonical quantity ptdmon reads from an engine.
type Metric uint8

// Counters: monotonic, tracked per source series so that resets are
// detected where they happen.
const (
	Completed Metric = iota
	PromptTokens
	GenerationTokens
	KVBytes
	KVTransfers
	KVFailures
	KVExpired
	Preemptions
	PrefixQueries
	PrefixHits
	Aborted
	Errored
	Retracted
	BootstrapFailed
	// KV transfer failures by class (failure.go); KVFailures holds the
	// failures a source does not classify, KVExpired the expiry class.
	KVFailNetwork
	KVFailTimeout
	KVFailNotify
	// Prompt tokens by where their KV came from (vLLM's
	// prompt_tokens_by_source_total): on a decode instance, computed tokens
	// are prefill work decode did itself.
	PromptTokensComputed
	PromptTokensCached
	PromptTokensTransferred
	PrefillRetries
	FrontendRequests
	// A router's requests (routers.go): every request it received, and
	// its P/D decisions: sent to a prefill instance first, or straight to
	// decode.
	RouterRequests
	RouterRemotePrefill
	RouterDecodeOnly
	// SchedulerIdle: seconds the engine's scheduler had nothing to run
	// (SGLang's scheduler_idle_seconds_total); 1 − its rate is the busy
	// fraction of each scheduler (DP ranks add up).
	SchedulerIdle
	// BusySeconds: seconds the engine spent running iterations (TensorRT-
	// LLM's iteration statistics: each iteration's loop time, added up);
	// its rate is the engine's busy fraction.
	BusySeconds
	// Shed: requests turned away before any engine queued them, for
	// capacity (a router's overload shedding, an engine's admission caps
	// and queue limits): offered load = served + shed.
	Shed
	// ForwardPassSeconds: the wall time of the engine's model executions
	// from its forward-pass metrics (vLLM, SGLang over ZeroMQ, read by
	// internal/fpm), one series per DP rank; its rate is each rank's busy
	// fraction.
	ForwardPassSeconds
	// Migrated: requests a router sent again to another worker after
	// the first was lost or failed them (Dynamo's migrations, the SGLang
	// gateway's retries): each is work done twice.
	Migrated
	numCounters
)

// Gauges: shown raw, never differentiated.
const (
	Running Metric = numCounters + iota
	Waiting
	QueueBootstrap
	QueueInflight
	QueuePrealloc
	QueueTransfer
	KVUsage
	RetractedNow
	IterationLatency
	IterationLoop
	KVInflight
	FrontendQueued
	FrontendInflight
	ActivePrefillTokens
	ActiveDecodeBlocks
	// ForwardOccupancy: the share (0..1) of recent wall time the GPU spent
	// in forward passes (SGLang's fwd_occupancy, a percentage upstream).
	ForwardOccupancy
	// ContextRequests and GenerationRequests: the requests of the current
	// iteration in their context (prefill) and generation (decode) phase.
	ContextRequests
	GenerationRequests
	// The KV cache in blocks: its size, the free and the used blocks, and
	// the tokens one block holds.
	KVBlocks
	KVBlocksFree
	KVBlocksUsed
	KVBlockSize
	// WaitingCapacity and WaitingDeferred split Waiting by why a request
	// waits (vLLM's num_requests_waiting_by_reason): for a place in the
	// batch, or deferred by a transient constraint; on a decode instance
	// the deferred are requests whose remote KV has not arrived.
	WaitingCapacity
	WaitingDeferred
	// Sleep mode (vLLM's engine_sleep_state, one series per engine and
	// state, 1 on the engine's state): the engines awake, asleep with their
	// weights offloaded (level 1) and asleep with everything discarded
	// (level 2). An instance none of whose engines is awake is not serving,
	// on purpose: neither down nor stalled.
	EnginesAwake
	EnginesWeightsOffloaded
	EnginesDiscardAll
	// MaxActiveRequests: the most requests the engine keeps active at once,
	// its own batch limit (TensorRT-LLM's max_num_active_requests).
	MaxActiveRequests
	numGaugesEnd
)

// Histograms.
const (
	TTFT Metric = numGaugesEnd + iota
	ITL
	E2E
	QueueTime
	PrefillTime
	DecodeTime
	KVXferTime
	KVPostTime
	KVDescriptors
	KVBootstrapTime
	KVAllocTime
	KVSpeed
	KVXferEstimate
	PrefillKVComputedTokens
	StageWaiting
	StageBootstrap
	StageForward
	StageKVTransfer
	// IterationTokens: tokens per engine step (vLLM's iteration_tokens_total);
	// its count is the number of steps run.
	IterationTokens
	// StageAllocWait: on decode, the wait for KV allocation after the
	// bootstrap handshake (SGLang's decode_kv_allocation_wait, which with
	// decode_bootstrap_handshake splits decode_bootstrap).
	StageAllocWait
	// A router's own time in each request's TTFT (docs/pools.md#where-ttft-goes):
	// waiting in its queue before dispatch (llm-d's flow control), and
	// Dynamo's frontend before it dispatches (preprocess: the chat template,
	// the tokenizer, multimodal data).
	RouterQueueTime
	RouterPreprocessTime
	// HandoverTime: the router's hand-over between the P/D legs, from the
	// prefill leg's end to the decode leg's send (the SGLang gateway's
	// sequential P/D); PrefillLegTime: the prefill leg as the router
	// times it, queue and prefill together.
	HandoverTime
	PrefillLegTime
	numMetrics
)

// Counts of each kind, for fixed-size arrays indexed by Metric.
const (
	NumCounters   = int(numCounters)
	NumGauges     = int(numGaugesEnd - numCounters)
	NumHistograms = int(numMetrics - numGaugesEnd)
	NumMetrics    = int(numMetrics)
)

// Kind tells how a metric's values are read.
type Kind uint8

const (
	KindCounter Kind = iota
	KindGauge
	KindHistogram
)

// Kind returns whether m is a counter, a gauge or a histogram.
func (m Metric) Kind() Kind {
	switch {
	case m < numCounters:
		return KindCounter
	case m < numGaugesEnd:
		return KindGauge
	}
	return KindHistogram
}

// GaugeIndex is m's position among the gauges (0..NumGauges-1).
func (m Metric) GaugeIndex() int { return int(m - numCounters) }

// HistogramIndex is m's position among the histograms (0..NumHistograms-1).
func (m Metric) HistogramIndex() int { return int(m - numGaugesEnd) }

// GaugeAt is the gauge at position i.
func GaugeAt(i int) Metric { return numCounters + Metric(i) }

// HistogramAt is the histogram at position i.
func HistogramAt(i int) Metric { return numGaugesEnd + Metric(i) }

var metricNames = [numMetrics]string{
	Completed:        "requests_completed",
	PromptTokens:     "prompt_tokens",
	GenerationTokens: "generation_tokens",
	KVBytes:          "kv_transfer_bytes",
	KVTransfers:      "kv_transfers",
	KVFailures:       "kv_transfer_failures",
	KVExpired:        "kv_expired_requests",
	Preemptions:      "preemptions",
	PrefixQueries:    "prefix_cache_queries",
	PrefixHits:       "prefix_cache_hits",
	Aborted:          "requests_aborted",
	Errored:          "requests_errored",
	Retracted:        "requests_retracted",
	BootstrapFailed:  "bootstrap_failures",
	Running:          "requests_running",
	Waiting:          "requests_waiting",
	QueueBootstrap:   "queue_bootstrap",
	QueueInflight:    "queue_inflight",
	QueuePrealloc:    "queue_prealloc",
	QueueTransfer:    "queue_transfer",
	KVUsage:          "kv_cache_usage_ratio",
	RetractedNow:     "requests_retracted_now",
	IterationLatency: "iteration_latency_seconds",
	IterationLoop:    "iteration_loop_seconds",
	TTFT:             "ttft_seconds",
	ITL:              "itl_seconds",
	E2E:              "e2e_seconds",
	QueueTime:        "queue_time_seconds",
	PrefillTime:      "prefill_time_seconds",
	DecodeTime:       "decode_time_seconds",
	KVXferTime:       "kv_transfer_time_seconds",

	// Failure classes (failure.go), prompt tokens by source, the
	// transfer libraries', SGLang's and Dynamo's families.
	KVFailNetwork:           "kv_transfer_failures_network",
	KVFailTimeout:           "kv_transfer_failures_timeout",
	KVFailNotify:            "kv_transfer_failures_notification",
	PromptTokensComputed:    "prompt_tokens_computed",
	PromptTokensCached:      "prompt_tokens_cached",
	PromptTokensTransferred: "prompt_tokens_transferred",
	PrefillRetries:          "prefill_retries",
	FrontendRequests:        "frontend_requests",
	RouterRequests:          "router_requests",
	RouterRemotePrefill:     "router_remote_prefill_decisions",
	RouterDecodeOnly:        "router_decode_only_decisions",
	KVInflight:              "kv_transfers_inflight",
	FrontendQueued:          "frontend_requests_queued",
	FrontendInflight:        "frontend_requests_inflight",
	ActivePrefillTokens:     "active_prefill_tokens",
	ActiveDecodeBlocks:      "active_decode_blocks",
	KVPostTime:              "kv_transfer_post_time_seconds",
	KVDescriptors:           "kv_transfer_descriptors",
	KVBootstrapTime:         "kv_bootstrap_time_seconds",
	KVAllocTime:             "kv_alloc_time_seconds",
	KVSpeed:                 "kv_transfer_speed_bytes_per_second",
	KVXferEstimate:          "kv_transfer_estimated_time_seconds",
	PrefillKVComputedTokens: "prefill_kv_computed_tokens",
	StageWaiting:            "stage_waiting_seconds",
	StageBootstrap:          "stage_bootstrap_seconds",
	StageForward:            "stage_forward_seconds",
	StageKVTransfer:         "stage_kv_transfer_seconds",

	// Busy-time signals: what a stage's scheduler and GPU spent working.
	SchedulerIdle:      "scheduler_idle_seconds",
	BusySeconds:        "busy_seconds",
	ForwardPassSeconds: "forward_pass_seconds",
	ForwardOccupancy:   "forward_occupancy_ratio",
	ContextRequests:    "requests_context",
	GenerationRequests: "requests_generation",
	KVBlocks:           "kv_cache_blocks",
	KVBlocksFree:       "kv_cache_blocks_free",
	KVBlocksUsed:       "kv_cache_blocks_used",
	KVBlockSize:        "kv_cache_block_size_tokens",
	IterationTokens:    "iteration_tokens",

	Shed:            "requests_shed",
	StageAllocWait:  "stage_kv_allocation_wait_seconds",
	WaitingCapacity: "requests_waiting_capacity",
	WaitingDeferred: "requests_waiting_deferred",

	EnginesAwake:            "engines_awake",
	EnginesWeightsOffloaded: "engines_asleep_weights_offloaded",
	EnginesDiscardAll:       "engines_asleep_discard_all",

	Migrated:             "requests_migrated",
	MaxActiveRequests:    "max_active_requests",
	RouterQueueTime:      "router_queue_time_seconds",
	RouterPreprocessTime: "router_preprocess_seconds",
	HandoverTime:         "pd_handover_seconds",
	PrefillLegTime:       "router_prefill_leg_seconds",
}

// String is the metric's canonical snake_case name, as used in JSON.
func (m Metric) String() string {
	if m < numMetrics {
		return metricNames[m]
	}
	return "unknown"
}

// averaged gauges are ratios or per-group sizes: instances' DP groups are
// averaged, not added.
func (m Metric) averaged() bool {
	switch m {
	case KVUsage, ForwardOccupancy, KVBlockSize, IterationLatency:
		return true
	}
	return false
}

// Role is the part an instance plays in the P/D pipeline.
type Role string

const (
	RoleUnknown Role = ""
	Prefill     Role = "prefill"
	Decode      Role = "decode"
	// Router: a request router in front of the prefill and decode
	// instances (routers.go); it counts in no stage.
	Router Role = "router"
)

// ParseRole accepts "prefill", "decode" (and the common short forms) and
// "router".
func ParseRole(s string) (Role, bool) {
	switch s {
	case "router":
		return Router, true
	case "prefill", "p", "P", "ctx", "context":
		return Prefill, true
	case "decode", "d", "D", "gen", "generation":
		return Decode, true
	}
	return RoleUnknown, false
}

// Engine names an inference engine's exposition dialect; each engine's
// file declares its own and registers its Adapter.
type Engine string

// EngineAuto detects the engine from the exposition's family names.
const EngineAuto Engine = ""
