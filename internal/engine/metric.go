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
}

// String is the metric's canonical snake_case name, as used in JSON.
func (m Metric) String() string {
	if m < numMetrics {
		return metricNames[m]
	}
	return "unknown"
}

// averaged gauges are ratios: instances' DP groups are averaged, not added.
func (m Metric) averaged() bool { return m == KVUsage }

// Role is the part an instance plays in the P/D pipeline.
type Role string

const (
	RoleUnknown Role = ""
	Prefill     Role = "prefill"
	Decode      Role = "decode"
)

// ParseRole accepts "prefill" and "decode" (and the common short forms).
func ParseRole(s string) (Role, bool) {
	switch s {
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
