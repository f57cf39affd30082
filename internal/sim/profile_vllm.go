package sim

import (
	"strconv"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// vLLM V1 behind a disaggregation proxy, with FlagCX or NIXL moving the KV:
// the proxy sends the prefill leg (max_tokens=1) to P, then the request to
// D, whose connector pulls or receives the KV once it has a slot for it.
func init() {
	RegisterProfile(Profile{
		Engine:            ptd.VLLM,
		Format:            vllmFormat{},
		Connectors:        []string{ConnectorFlagCX, ConnectorNIXL},
		ConnectorRequired: true,
		SplitLegs:         true,
		// kv_load_failure_policy "recompute".
		RecomputesFailedLoads: true,
		Traces:                LLMRequestSpans,
		Histograms:            vllmHistograms,
		OnTransfer:            vllmTransfer,
	})
}

// vllmHistograms are the bucket layouts of vLLM's collectors
// (v1/metrics/loggers.py and the KV connectors' stats).
func vllmHistograms(es *EngineStats) {
	es.TTFT = newHistogram(vllmTTFTBuckets)
	es.ITL = newHistogram(vllmITLBuckets)
	es.E2E = newHistogram(vllmRequestLatencyBuckets)
	es.QueueTime = newHistogram(vllmRequestLatencyBuckets)
	es.PrefillTime = newHistogram(vllmRequestLatencyBuckets)
	es.DecodeTime = newHistogram(vllmRequestLatencyBuckets)
	es.InferenceTime = newHistogram(vllmRequestLatencyBuckets)
	es.PromptLen = newHistogram(vllmTokenBuckets)
	es.GenLen = newHistogram(vllmTokenBuckets)
	es.XferTime = newHistogram(vllmXferTimeBuckets)
	es.PostTime = newHistogram(vllmPostTimeBuckets)
	es.XferBytes = newHistogram(vllmXferBytesBuckets)
	es.XferDescs = newHistogram(vllmDescriptorBuckets)
	es.IterTokens = newHistogram(vllmIterTokenBuckets)
}

// Bucket boundaries of vLLM's v1/metrics/loggers.py and of its KV
// connectors' stats (kv_connector nixl/stats.py, FlagCX flagcx_stats.py).
var (
	vllmTTFTBuckets = newTable(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
	vllmITLBuckets = newTable(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)
	vllmRequestLatencyBuckets = newTable(0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0,
		20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
	// build_1_2_5_buckets(max_model_len=131072).
	vllmTokenBuckets = newTable(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
		20000, 50000, 100000)
	vllmXferTimeBuckets  = newTable(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0)
	vllmPostTimeBuckets  = newTable(0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0)
	vllmXferBytesBuckets = func() *bucketTable { // 2**(10+i) for i in range(1, 25, 2): 2 KiB .. 8 GiB
		var b []float64
		for i := 1; i < 25; i += 2 {
			b = append(b, float64(int64(1)<<(10+i)))
		}
		return newTable(b...)
	}()
	vllmDescriptorBuckets = newTable(10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000)
	// build_cudagraph_buckets with enforce_eager.
	vllmIterTokenBuckets = newTable(1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8096)
)

// vllmTransfer: the KV connector's stats observe every copy on the side
// that counts it.
func vllmTransfer(exporter, _ *EngineStats, x Transfer) {
	exporter.XferTime.observe(x.Duration.Seconds())
	exporter.XferBytes.observe(float64(x.Bytes))
	exporter.XferDescs.observe(float64(x.Descriptors))
	exporter.PostTime.observe(0.0005)
}

// vllmFormat prints what a single-API-server vLLM V1 prints: Python
// prometheus_client in single-process mode, so every counter and histogram
// child also gets a `<name>_created` gauge family, labels are sorted, every
// series carries model_name and engine (one per DP engine), and all
// finished_reason values are pre-created at 0.
type vllmFormat struct{}

func (vllmFormat) ContentType() string { return textContentType }

type vllmGauge struct {
	name, help string
	get        func(*EngineStats) float64
}

type vllmCounter struct {
	name, help string // name without _total
	get        func(*EngineStats) float64
}

type vllmHist struct {
	name, help string
	get        func(*EngineStats) *Histogram
}

var vllmGauges = []vllmGauge{
	{"vllm:num_requests_running", "Number of requests in model execution batches.",
		func(s *EngineStats) float64 { return float64(s.Running) }},
	{"vllm:num_requests_waiting", "Number of requests waiting to be processed.",
		func(s *EngineStats) float64 { return float64(s.Waiting) }},
	{"vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
		func(s *EngineStats) float64 { return s.KVUsage }},
}

var vllmCounters = []vllmCounter{
	{"vllm:prefix_cache_queries", "Prefix cache queries, in terms of number of queried tokens.",
		func(s *EngineStats) float64 { return float64(s.PrefixQueries) }},
	{"vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
		func(s *EngineStats) float64 { return float64(s.PrefixHits) }},
	{"vllm:num_preemptions", "Cumulative number of preemption from the engine.",
		func(s *EngineStats) float64 { return float64(s.Preemptions) }},
	{"vllm:prompt_tokens", "Number of prefill tokens processed.",
		func(s *EngineStats) float64 { return float64(s.PromptTokens) }},
	{"vllm:generation_tokens", "Number of generation tokens processed.",
		func(s *EngineStats) float64 { return float64(s.GenTokens) }},
}

var vllmHists = []vllmHist{
	{"vllm:request_prompt_tokens", "Number of prefill tokens processed.",
		func(s *EngineStats) *Histogram { return &s.PromptLen }},
	{"vllm:request_generation_tokens", "Number of generation tokens processed.",
		func(s *EngineStats) *Histogram { return &s.GenLen }},
	{"vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.",
		func(s *EngineStats) *Histogram { return &s.IterTokens }},
	{"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
		func(s *EngineStats) *Histogram { return &s.TTFT }},
	{"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
		func(s *EngineStats) *Histogram { return &s.ITL }},
	{"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
		func(s *EngineStats) *Histogram { return &s.E2E }},
	{"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
		func(s *EngineStats) *Histogram { return &s.QueueTime }},
	{"vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.",
		func(s *EngineStats) *Histogram { return &s.InferenceTime }},
	{"vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.",
		func(s *EngineStats) *Histogram { return &s.PrefillTime }},
	{"vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.",
		func(s *EngineStats) *Histogram { return &s.DecodeTime }},
}

// FlagCXPromMetrics registers its counters first, then its histograms.
var flagcxCounters = []vllmCounter{
	{"vllm:flagcx_total_bytes_transferred", "Total bytes transferred by FlagCX KV Cache transfers.",
		func(s *EngineStats) float64 { return float64(s.KV.BytesTransferred) }},
	{"vllm:flagcx_total_xfer_time_seconds", "Total time spent inside FlagCX KV Cache transfers. Divide vllm:flagcx_total_bytes_transferred_total by this to get effective link throughput.",
		func(s *EngineStats) float64 { return s.KV.TransferTime.Seconds() }},
	{"vllm:flagcx_transfers", "Number of successful FlagCX KV Cache transfers.",
		func(s *EngineStats) float64 { return float64(s.KV.Transfers) }},
	{"vllm:flagcx_total_descriptors", "Total number of descriptors written by FlagCX KV Cache transfers.",
		func(s *EngineStats) float64 { return float64(s.KV.Descriptors) }},
	{"vllm:flagcx_num_failed_transfers", "Number of failed FlagCX KV Cache transfers. NOTE: This metric is tracked on the P instance.",
		func(s *EngineStats) float64 { return float64(s.KV.FailedTransfers) }},
	{"vllm:flagcx_num_failed_recvs", "Number of failed FlagCX KV Cache receives (side-channel or transfer errors reported to D). NOTE: This metric is tracked on the D instance.",
		func(s *EngineStats) float64 { return float64(s.KV.FailedRecvs) }},
	{"vllm:flagcx_num_kv_expired_reqs", "Number of requests that had their KV expire before being sent. NOTE: This metric is tracked on the P instance.",
		func(s *EngineStats) float64 { return float64(s.KV.ExpiredReqs) }},
}

var flagcxHists = []vllmHist{
	{"vllm:flagcx_xfer_time_seconds", "Histogram of transfer duration for FlagCX KV Cache transfers.",
		func(s *EngineStats) *Histogram { return &s.XferTime }},
	{"vllm:flagcx_bytes_transferred", "Histogram of bytes transferred per FlagCX KV Cache transfer.",
		func(s *EngineStats) *Histogram { return &s.XferBytes }},
	{"vllm:flagcx_num_descriptors", "Histogram of number of descriptors per FlagCX KV Cache transfer.",
		func(s *EngineStats) *Histogram { return &s.XferDescs }},
}

// NixlPromMetrics registers its histograms first, then its counters.
var nixlHists = []vllmHist{
	{"vllm:nixl_xfer_time_seconds", "Histogram of transfer duration for NIXL KV Cache transfers.",
		func(s *EngineStats) *Histogram { return &s.XferTime }},
	{"vllm:nixl_post_time_seconds", "Histogram of transfer post time for NIXL KV Cache transfers.",
		func(s *EngineStats) *Histogram { return &s.PostTime }},
	{"vllm:nixl_bytes_transferred", "Histogram of bytes transferred per NIXL KV Cache transfers.",
		func(s *EngineStats) *Histogram { return &s.XferBytes }},
	{"vllm:nixl_num_descriptors", "Histogram of number of descriptors per NIXL  KV Cache transfers.",
		func(s *EngineStats) *Histogram { return &s.XferDescs }},
}

var nixlCounters = []vllmCounter{
	{"vllm:nixl_num_failed_transfers", "Number of failed NIXL KV Cache transfers.",
		func(s *EngineStats) float64 { return float64(s.KV.FailedTransfers) }},
	{"vllm:nixl_num_failed_notifications", "Number of failed NIXL KV Cache notifications.",
		func(s *EngineStats) float64 { return float64(s.KV.FailedRecvs) }},
	{"vllm:nixl_num_kv_expired_reqs", "Number of requests that had their KV expire. NOTE: This metric is tracked on the P instance.",
		func(s *EngineStats) float64 { return float64(s.KV.ExpiredReqs) }},
}

// nixlPushCounters are the push (WRITE) mode's own (PR #57722).
var nixlPushCounters = []vllmCounter{
	{"vllm:nixl_num_registration_expired", "Number of decode registrations that expired before a push.",
		func(*EngineStats) float64 { return 0 }},
	{"vllm:nixl_num_writer_loop_errors", "Number of exceptions in the NIXL push writer loop.",
		func(*EngineStats) float64 { return 0 }},
}

func vllmBase(v *InstanceView, s *EngineStats, buf *[2]label) []label {
	buf[0] = label{"engine", strconv.Itoa(s.Index)}
	buf[1] = label{"model_name", v.Model}
	return buf[:]
}

// Render prints the families in the order vLLM's PrometheusStatLogger
// registers them (the order prometheus_client prints), connector last.
func (vllmFormat) Render(dst []byte, v *InstanceView) []byte {
	var lb [2]label
	for _, g := range vllmGauges {
		dst = appendHeader(dst, g.name, g.help, "gauge")
		for _, s := range v.Engines {
			dst = appendSample(dst, g.name, "", vllmBase(v, s, &lb), g.get(s))
		}
	}
	dst = vllmWaitingByReason(dst, v)
	dst = vllmSleepState(dst, v)
	for _, c := range vllmCounters {
		dst = vllmCounterFamily(dst, v, c)
	}
	dst = vllmBySource(dst, v)
	dst = vllmAdmissionRejections(dst, v)
	// request_success: one child per (engine, finished_reason), all pre-created.
	const succ, succHelp = "vllm:request_success", "Count of successfully processed requests."
	dst = appendHeader(dst, succ+"_total", succHelp, "counter")
	for _, s := range v.Engines {
		for i, r := range finishReasons {
			dst = appendSample(dst, succ, "_total", vllmBase(v, s, &lb), float64(s.Finished[i]), label{"finished_reason", r})
		}
	}
	dst = appendHeader(dst, succ+"_created", succHelp, "gauge")
	for _, s := range v.Engines {
		for i, r := range finishReasons {
			dst = appendSample(dst, succ, "_created", vllmBase(v, s, &lb), s.Created+float64(i)*1e-6, label{"finished_reason", r})
		}
	}
	for _, h := range vllmHists {
		dst = vllmHistFamily(dst, v, h)
	}
	switch v.Connector {
	case ConnectorFlagCX:
		for _, c := range flagcxCounters {
			dst = vllmCounterFamily(dst, v, c)
		}
		for _, h := range flagcxHists {
			dst = vllmHistFamily(dst, v, h)
		}
	case ConnectorNIXL:
		for _, h := range nixlHists {
			dst = vllmHistFamily(dst, v, h)
		}
		for _, c := range nixlCounters {
			dst = vllmCounterFamily(dst, v, c)
		}
		if v.Group.NIXLPush {
			// The push connector's failures, not modelled: at 0.
			for _, c := range nixlPushCounters {
				dst = vllmCounterFamily(dst, v, c)
			}
		}
	}
	return vllmCacheConfig(dst, v)
}

// vllmCacheConfig prints cache_config_info, which the logger sets once the
// engines are initialised (so last): an info gauge per engine whose labels
// are CacheConfig.metrics_info() (the fields the model has) and engine.
func vllmCacheConfig(dst []byte, v *InstanceView) []byte {
	const name = "vllm:cache_config_info"
	dst = appendHeader(dst, name, "Information of the LLMEngine CacheConfig", "gauge")
	for _, s := range v.Engines {
		ls := [...]label{
			{"block_size", strconv.Itoa(s.KVBlockTokens)},
			{"cache_dtype", "auto"},
			{"enable_prefix_caching", "True"},
			{"engine", strconv.Itoa(s.Index)},
			{"gpu_memory_utilization", "0.9"},
			{"num_cpu_blocks", "None"},
			{"num_gpu_blocks", strconv.Itoa(s.KVBlocksMax)},
		}
		dst = appendSample(dst, name, "", ls[:], 1)
	}
	return dst
}

func vllmCounterFamily(dst []byte, v *InstanceView, c vllmCounter) []byte {
	var lb [2]label
	dst = appendHeader(dst, c.name+"_total", c.help, "counter")
	for _, s := range v.Engines {
		dst = appendSample(dst, c.name, "_total", vllmBase(v, s, &lb), c.get(s))
	}
	dst = appendHeader(dst, c.name+"_created", c.help, "gauge")
	for _, s := range v.Engines {
		dst = appendSample(dst, c.name, "_created", vllmBase(v, s, &lb), s.Created)
	}
	return dst
}

// vllmHistFamily prints single-process order: per child the cumulative
// buckets, then _count, then _sum; the _created gauges follow the family.
func vllmHistFamily(dst []byte, v *InstanceView, h vllmHist) []byte {
	var lb [2]label
	dst = appendHeader(dst, h.name, h.help, "histogram")
	for _, s := range v.Engines {
		hist := h.get(s)
		base := vllmBase(v, s, &lb)
		var acc uint64
		for i, le := range hist.tbl.le {
			acc += hist.counts[i]
			dst = appendSample(dst, h.name, "_bucket", base, float64(acc), label{"le", le})
		}
		dst = appendSample(dst, h.name, "_count", base, float64(acc))
		dst = appendSample(dst, h.name, "_sum", base, hist.sum)
	}
	dst = appendHeader(dst, h.name+"_created", h.help, "gauge")
	for _, s := range v.Engines {
		dst = appendSample(dst, h.name, "_created", vllmBase(v, s, &lb), s.Created)
	}
	return dst
}

// vllmWaitingByReason prints num_requests_waiting_by_reason (PR #38435):
// per engine, the waiting split into capacity and deferred.
func vllmWaitingByReason(dst []byte, v *InstanceView) []byte {
	if v.Group.NoWaitingByReason {
		return dst
	}
	const name = "vllm:num_requests_waiting_by_reason"
	var lb [2]label
	dst = appendHeader(dst, name, "Number of requests waiting to be processed, by reason.", "gauge")
	for _, s := range v.Engines {
		dst = appendSample(dst, name, "", vllmBase(v, s, &lb), float64(s.WaitCapacity), label{"reason", "capacity"})
		dst = appendSample(dst, name, "", vllmBase(v, s, &lb), float64(s.WaitDeferred), label{"reason", "deferred"})
	}
	return dst
}

// vllmSleepState prints engine_sleep_state (PR #24176): per engine, one
// series for each sleep state, 1 on the engine's own. An instance asleep
// (Scenario.Asleep) sleeps at level 1, weights offloaded.
func vllmSleepState(dst []byte, v *InstanceView) []byte {
	const name = "vllm:engine_sleep_state"
	var lb [2]label
	awake, offloaded := 1.0, 0.0
	if v.Asleep {
		awake, offloaded = 0, 1
	}
	dst = appendHeader(dst, name, "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; "+
		"weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.", "gauge")
	for _, st := range [...]struct {
		state string
		v     float64
	}{{"awake", awake}, {"weights_offloaded", offloaded}, {"discard_all", 0}} {
		for _, s := range v.Engines {
			dst = appendSample(dst, name, "", vllmBase(v, s, &lb), st.v, label{"sleep_state", st.state})
		}
	}
	return dst
}

// vllmAdmissionRejections prints admission_rejections_total (PR #55812)
// where the group caps its queue (shed.go): the API server's count of the
// requests it refused, with no engine label.
func vllmAdmissionRejections(dst []byte, v *InstanceView) []byte {
	if v.Group.MaxQueued <= 0 {
		return dst
	}
	const name, help = "vllm:admission_rejections", "Number of requests rejected at admission."
	var n float64
	created := 0.0
	for _, s := range v.Engines {
		n += float64(s.Shed)
		created = s.Created
	}
	ls := []label{{"model_name", v.Model}, {"reason", "max_num_queued_reqs"}}
	dst = appendHeader(dst, name+"_total", help, "counter")
	dst = appendSample(dst, name, "_total", ls, n)
	dst = appendHeader(dst, name+"_created", help, "gauge")
	return appendSample(dst, name, "_created", ls, created)
}
