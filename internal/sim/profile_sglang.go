package sim

import (
	"strconv"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// SGLang with its Mooncake transfer engine: the router sends the request to
// P and D at once; D pre-allocates the KV before P may prefill (the
// bootstrap handshake), P pushes the KV and returns the request once it has
// left, and the engine counts failed transfers and bootstraps itself.
func init() {
	RegisterProfile(Profile{
		Engine:                 ptd.SGLang,
		Format:                 sglangFormat{},
		Connectors:             []string{ConnectorMooncake},
		PreallocFirst:          true,
		EngineCountsKVFailures: true,
		PrefillStages:          true,
		Traces:                 StageSliceSpans,
		Histograms:             sglangHistograms,
		OnTransfer:             sglangTransfer,
	})
}

// sglangHistograms are the bucket layouts of SGLang's
// observability/metrics_collector.py.
func sglangHistograms(es *EngineStats) {
	es.TTFT = newHistogram(sglangTTFTBuckets)
	es.ITL = newHistogram(sglangITLBuckets)
	es.E2E = newHistogram(sglangE2EBuckets)
	es.KVMB = newHistogram(sglangKVMBBuckets)
	es.KVLatencyMs = newHistogram(sglangKVLatencyBuckets)
	es.KVSpeedGBs = newHistogram(sglangKVSpeedBuckets)
}

// Bucket boundaries of SGLang's observability/metrics_collector.py.
var (
	sglangTTFTBuckets = newTable(0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
	sglangE2EBuckets  = newTable(0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 800)
	sglangITLBuckets  = newTable(0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035,
		0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
	sglangKVMBBuckets      = newTable(1, 5, 10, 50, 100, 500, 1000, 5000, 10000)
	sglangKVLatencyBuckets = newTable(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000)
	sglangKVSpeedBuckets   = newTable(0.1, 0.5, 1, 5, 10, 25, 50, 100, 200, 400)
)

// sglangTransfer: the prefill side observes each request's KV size,
// latency and speed (and, before 2026, kept the last one in gauges).
func sglangTransfer(_, prefill *EngineStats, x Transfer) {
	secs := x.Duration.Seconds()
	mb := float64(x.Bytes) / (1 << 20)
	prefill.KVMB.observe(mb)
	prefill.KVLatencyMs.observe(secs * 1e3)
	prefill.KVSpeedGBs.observe(float64(x.Bytes) / 1e9 / secs)
	prefill.LastKVMB, prefill.LastKVMs, prefill.LastKVGB = mb, secs*1e3, float64(x.Bytes)/1e9/secs
}

// sglangFormat prints what SGLang's /metrics prints: prometheus_client in
// multiprocess mode (no _created; gauges without multiprocess_mode get a pid
// label; histograms come out as _sum, buckets, _count), scheduler metrics
// labelled per scheduler rank, tokenizer metrics once per server, and
// series that only appear once first set (tokenizer counters, KV-transfer
// histograms, failure counters) — so a fresh or restarted server lacks them.
type sglangFormat struct{}

func (sglangFormat) ContentType() string { return textContentType }

type sglGauge struct {
	name, help string
	pid        bool // multiprocess_mode "all": one series per process
	get        func(*EngineStats) float64
}

var sglangGauges = []sglGauge{
	{"sglang:num_running_reqs", "The number of running requests.", false,
		func(s *EngineStats) float64 { return float64(s.Running) }},
	{"sglang:num_used_tokens", "The number of used tokens.", false,
		func(s *EngineStats) float64 { return float64(s.UsedTokens) }},
	{"sglang:token_usage", "The token usage.", false,
		func(s *EngineStats) float64 { return s.KVUsage }},
	{"sglang:gen_throughput", "The generation throughput (token/s).", false,
		func(s *EngineStats) float64 { return s.GenThroughput }},
	{"sglang:num_queue_reqs", "The number of requests in the waiting queue.", false,
		func(s *EngineStats) float64 { return float64(s.Queued) }},
	{"sglang:cache_hit_rate", "The prefix cache hit rate.", false,
		func(s *EngineStats) float64 { return 0 }},
	{"sglang:num_retracted_reqs", "The number of retracted requests.", true,
		func(s *EngineStats) float64 { return 0 }},
	{"sglang:num_paused_reqs", "The number of paused requests by async weight sync.", true,
		func(s *EngineStats) float64 { return 0 }},
	// PR #24458: the GPU's forward share of the last window, in percent;
	// NaN once idle.
	{"sglang:fwd_occupancy", "Forward pass GPU occupancy percentage.", false,
		func(s *EngineStats) float64 { return 100 * s.Occupancy }},
}

var (
	sglBootstrapQueue = sglGauge{"sglang:num_prefill_bootstrap_queue_reqs", "The number of requests in the prefill bootstrap queue.", false,
		func(s *EngineStats) float64 { return float64(s.Bootstrap) }}
	sglBootstrapQueueOld = sglGauge{"sglang:num_prefill_prealloc_queue_reqs", "The number of requests in the prefill prealloc queue.", false,
		func(s *EngineStats) float64 { return float64(s.Bootstrap) }}
	sglPDQueues = []sglGauge{
		{"sglang:num_prefill_inflight_queue_reqs", "The number of requests in the prefill inflight queue.", false,
			func(s *EngineStats) float64 { return float64(s.Inflight) }},
		{"sglang:num_decode_prealloc_queue_reqs", "The number of requests in the decode prealloc queue.", false,
			func(s *EngineStats) float64 { return float64(s.Prealloc) }},
		{"sglang:num_decode_transfer_queue_reqs", "The number of requests in the decode transfer queue.", false,
			func(s *EngineStats) float64 { return float64(s.TransferQueue) }},
	}
	// Pre-2026 (before PR #19009) KV-transfer metrics were last-value gauges.
	sglOldKVGauges = []sglGauge{
		{"sglang:kv_transfer_speed_gb_s", "The transfer speed of the KV cache in GB/s.", false,
			func(s *EngineStats) float64 { return s.LastKVGB }},
		{"sglang:kv_transfer_latency_ms", "The transfer latency of the KV cache in ms.", false,
			func(s *EngineStats) float64 { return s.LastKVMs }},
		{"sglang:kv_transfer_total_mb", "The total number of tokens transferred in the KV cache.", false,
			func(s *EngineStats) float64 { return s.LastKVMB }},
	}
)

type sglHist struct {
	name, help string
	get        func(*EngineStats) *Histogram
}

var sglKVHists = []sglHist{
	{"sglang:kv_transfer_speed_gb_s", "Histogram of KV cache transfer speed in GB/s.",
		func(s *EngineStats) *Histogram { return &s.KVSpeedGBs }},
	{"sglang:kv_transfer_latency_ms", "Histogram of KV cache transfer latency in ms.",
		func(s *EngineStats) *Histogram { return &s.KVLatencyMs }},
	{"sglang:kv_transfer_total_mb", "Histogram of KV cache transfer size in MB.",
		func(s *EngineStats) *Histogram { return &s.KVMB }},
}

var sglTokenizerHists = []sglHist{
	{"sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		func(s *EngineStats) *Histogram { return &s.TTFT }},
	{"sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
		func(s *EngineStats) *Histogram { return &s.ITL }},
	{"sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds",
		func(s *EngineStats) *Histogram { return &s.E2E }},
}

type sglCounter struct {
	name, help string // exposed name (with _total)
	get        func(*EngineStats) float64
}

var sglSchedulerCounters = []sglCounter{
	{"sglang:num_bootstrap_failed_reqs_total", "The number of bootstrap failed requests.",
		func(s *EngineStats) float64 { return float64(s.BootstrapFailed) }},
	{"sglang:num_transfer_failed_reqs_total", "The number of transfer failed requests.",
		func(s *EngineStats) float64 { return float64(s.TransferFailed) }},
}

var sglTokenizerCounters = []sglCounter{
	{"sglang:prompt_tokens_total", "Number of prefill tokens processed.",
		func(s *EngineStats) float64 { return float64(s.PromptTokens) }},
	{"sglang:generation_tokens_total", "Number of generation tokens processed.",
		func(s *EngineStats) float64 { return float64(s.GenTokens) }},
	{"sglang:num_requests_total", "Number of requests processed.",
		func(s *EngineStats) float64 { return float64(s.Requests) }},
}

// schedulerLabels: engine_type, model_name, pp_rank, tp_rank, and dp_rank
// with data parallelism (rank 0 of each DP group reports; tp_rank follows
// the DP rank as in DP-attention dumps).
func sglSchedulerLabels(v *InstanceView, s *EngineStats, buf *[5]label) []label {
	rank := strconv.Itoa(s.Index)
	n := 0
	if len(v.Engines) > 1 {
		buf[n] = label{"dp_rank", rank}
		n++
	}
	buf[n] = label{"engine_type", v.Role}
	buf[n+1] = label{"model_name", v.Model}
	buf[n+2] = label{"pp_rank", "0"}
	buf[n+3] = label{"tp_rank", rank}
	return buf[:n+4]
}

func sglTokenizerLabels(v *InstanceView, buf *[2]label) []label {
	if v.Group.OmitEngineType {
		buf[0] = label{"model_name", v.Model}
		return buf[:1]
	}
	buf[0] = label{"engine_type", v.Role}
	buf[1] = label{"model_name", v.Model}
	return buf[:2]
}

func (sglangFormat) Render(dst []byte, v *InstanceView) []byte {
	var lb [5]label
	gauge := func(g sglGauge) {
		dst = appendHeader(dst, g.name, g.help, "gauge")
		for _, s := range v.Engines {
			base := sglSchedulerLabels(v, s, &lb)
			if g.pid {
				dst = appendSample(dst, g.name, "", base, g.get(s), label{"pid", strconv.Itoa(s.PID)})
			} else {
				dst = appendSample(dst, g.name, "", base, g.get(s))
			}
		}
	}
	for _, g := range sglangGauges {
		gauge(g)
	}
	if v.Group.OldQueueName {
		gauge(sglBootstrapQueueOld)
	} else {
		gauge(sglBootstrapQueue)
	}
	for _, g := range sglPDQueues {
		gauge(g)
	}
	if v.Group.OldKVGauge && v.Role == RolePrefill {
		for _, g := range sglOldKVGauges {
			gauge(g)
		}
	}
	for _, c := range sglSchedulerCounters {
		dst = sglSchedulerCounter(dst, v, c)
	}
	dst = sglQueueRejected(dst, v)
	dst = sglSchedulerTime(dst, v)
	if !v.Group.OldKVGauge {
		for _, h := range sglKVHists {
			dst = sglSchedulerHist(dst, v, h)
		}
	}
	dst = sglStageHists(dst, v)
	var tb [2]label
	tl := sglTokenizerLabels(v, &tb)
	for _, c := range sglTokenizerCounters {
		var sum float64
		for _, s := range v.Engines {
			sum += c.get(s)
		}
		if sum == 0 { // child not created until first inc()
			continue
		}
		dst = appendHeader(dst, c.name, c.help, "counter")
		dst = appendSample(dst, c.name, "", tl, sum)
	}
	for _, h := range sglTokenizerHists {
		dst = sglTokenizerHist(dst, v, tl, h)
	}
	return dst
}

func sglSchedulerCounter(dst []byte, v *InstanceView, c sglCounter) []byte {
	var lb [5]label
	header := false
	for _, s := range v.Engines {
		if c.get(s) == 0 {
			continue
		}
		if !header {
			dst = appendHeader(dst, c.name, c.help, "counter")
			header = true
		}
		dst = appendSample(dst, c.name, "", sglSchedulerLabels(v, s, &lb), c.get(s))
	}
	return dst
}

// sglSchedulerTime prints the scheduler's wall time (SGLang 0.5.20): its
// idle seconds (PR #37461) and its seconds by stage (PR #37636), of which
// the model has two: run_batch while it computes, idle otherwise.
func sglSchedulerTime(dst []byte, v *InstanceView) []byte {
	var lb [5]label
	const idle = "sglang:scheduler_idle_seconds_total"
	dst = appendHeader(dst, idle, "Total wall time the scheduler spent idle in seconds.", "counter")
	for _, s := range v.Engines {
		dst = appendSample(dst, idle, "", sglSchedulerLabels(v, s, &lb), s.Idle)
	}
	const stage = "sglang:scheduler_stage_seconds_total"
	dst = appendHeader(dst, stage, "Total scheduler wall time by stage in seconds.", "counter")
	for _, s := range v.Engines {
		base := sglSchedulerLabels(v, s, &lb)
		dst = appendSample(dst, stage, "", base, s.Idle, label{"category", "idle"})
		dst = appendSample(dst, stage, "", base, s.Busy, label{"category", "run_batch"})
	}
	return dst
}

func sglSchedulerHist(dst []byte, v *InstanceView, h sglHist) []byte {
	var lb [5]label
	header := false
	for _, s := range v.Engines {
		hist := h.get(s)
		if hist.count == 0 || hist.tbl == nil {
			continue
		}
		if !header {
			dst = appendHeader(dst, h.name, h.help, "histogram")
			header = true
		}
		base := sglSchedulerLabels(v, s, &lb)
		dst = appendSample(dst, h.name, "_sum", base, hist.sum)
		var acc uint64
		for i, le := range hist.tbl.le {
			acc += hist.counts[i]
			dst = appendSample(dst, h.name, "_bucket", base, float64(acc), label{"le", le})
		}
		dst = appendSample(dst, h.name, "_count", base, float64(acc))
	}
	return dst
}

// sglTokenizerHist merges the engines' observations: the tokenizer is one
// process per server whatever the DP size.
func sglTokenizerHist(dst []byte, v *InstanceView, tl []label, h sglHist) []byte {
	var count uint64
	var sum float64
	var tbl *bucketTable
	for _, s := range v.Engines {
		hist := h.get(s)
		count += hist.count
		sum += hist.sum
		tbl = hist.tbl
	}
	if count == 0 || tbl == nil {
		return dst
	}
	dst = appendHeader(dst, h.name, h.help, "histogram")
	dst = appendSample(dst, h.name, "_sum", tl, sum)
	var acc uint64
	for i, le := range tbl.le {
		for _, s := range v.Engines {
			acc += h.get(s).counts[i]
		}
		dst = appendSample(dst, h.name, "_bucket", tl, float64(acc), label{"le", le})
	}
	return appendSample(dst, h.name, "_count", tl, float64(acc))
}

// sglQueueRejected prints num_queue_rejected_requests_total (PR #34320)
// with reason="queue_full", per scheduler, once a request was refused
// (shed.go).
func sglQueueRejected(dst []byte, v *InstanceView) []byte {
	const name = "sglang:num_queue_rejected_requests_total"
	var lb [5]label
	header := false
	for _, s := range v.Engines {
		if s.Shed == 0 {
			continue
		}
		if !header {
			dst = appendHeader(dst, name, "Number of requests rejected from the waiting queue.", "counter")
			header = true
		}
		dst = appendSample(dst, name, "", sglSchedulerLabels(v, s, &lb), float64(s.Shed), label{"reason", "queue_full"})
	}
	return dst
}
