package sim

import ptd "github.com/ptdmon/ptdmon/internal/engine"

// TensorRT-LLM workers behind trtllm-serve disaggregated, with the UCX cache
// transceiver: the disaggregated server sends the context-only request to a
// ctx worker and hands it to a gen worker once that answered, as vLLM's
// proxy does. A worker serves its Prometheus text at /prometheus/metrics
// and its JSON iteration statistics at /metrics.
func init() {
	RegisterProfile(Profile{
		Engine:         ptd.TensorRTLLM,
		Format:         trtllmFormat{},
		Connectors:     []string{ConnectorUCX},
		MetricsPath:    "/prometheus/metrics",
		IterationStats: true,
		SplitLegs:      true,
		NoDecodeOnly:   true,
		// The simulator gives its histograms vLLM's layouts.
		Histograms: vllmHistograms,
	})
}

// trtllmFormat prints what a trtllm-serve worker serves at
// /prometheus/metrics (docs/engines.md#tensorrt-llm): prometheus_client in multiprocess
// mode (no _created; histograms as _sum, buckets, _count), one registry per
// worker whatever its attention-DP size (so DP engines are summed), labels
// engine_type and model_name, finished_reason on request_success_total.
// Per-request families appear with their first observation; the iteration
// gauges and num_requests_completed_total are always there. Group option
// trtllm.old_names prints the pre-2026 collector instead: no prefix and only
// request_success_total plus four latency histograms. The JSON iteration
// stats at /metrics are in iterstats.go.
type trtllmFormat struct{}

func (trtllmFormat) ContentType() string { return textContentType }

type trtHist struct {
	name, help string
	old        bool // also in the pre-2026 collector
	get        func(*EngineStats) *Histogram
}

var trtHists = []trtHist{
	{"e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", true,
		func(s *EngineStats) *Histogram { return &s.E2E }},
	{"time_to_first_token_seconds", "Histogram of time to first token in seconds.", true,
		func(s *EngineStats) *Histogram { return &s.TTFT }},
	{"time_per_output_token_seconds", "Histogram of time per output token in seconds.", true, nil},
	{"request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", true,
		func(s *EngineStats) *Histogram { return &s.QueueTime }},
	{"request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", false,
		func(s *EngineStats) *Histogram { return &s.PrefillTime }},
	{"request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", false,
		func(s *EngineStats) *Histogram { return &s.DecodeTime }},
	{"request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", false,
		func(s *EngineStats) *Histogram { return &s.InferenceTime }},
}

func trtLabels(v *InstanceView, buf *[2]label) []label {
	et, mn := "trtllm", v.Model
	if v.Group.TRTLLM.UndefinedLabels {
		et, mn = "undefined", "undefined"
	}
	buf[0] = label{"engine_type", et}
	buf[1] = label{"model_name", mn}
	return buf[:]
}

func (trtllmFormat) Render(dst []byte, v *InstanceView) []byte {
	var lb [2]label
	base := trtLabels(v, &lb)
	prefix := "trtllm_"
	old := v.Group.TRTLLM.OldNames
	if old {
		prefix = ""
	}
	var nb [96]byte
	name := func(n string) string { return string(append(append(nb[:0], prefix...), n...)) }

	// request_success_total: a child per finished_reason once it occurred.
	var finished [len(finishReasons)]uint64
	var done, prompt, gen uint64
	for _, s := range v.Engines {
		for i, n := range s.Finished {
			finished[i] += n
			done += n
		}
		prompt += s.PromptTokens
		gen += s.GenTokens
	}
	if done > 0 {
		n := name("request_success_total")
		dst = appendHeader(dst, n, "Count of successfully processed requests.", "counter")
		for i, r := range finishReasons {
			if finished[i] > 0 {
				dst = appendSample(dst, n, "", base, float64(finished[i]), label{"finished_reason", r})
			}
		}
	}
	for _, h := range trtHists {
		if old && !h.old {
			continue
		}
		dst = trtHistFamily(dst, v, base, name(h.name), h)
	}
	if old {
		return dst
	}
	for _, c := range [...]struct {
		n, help string
		v       uint64
	}{
		{"prompt_tokens_total", "Number of prefill tokens processed.", prompt},
		{"generation_tokens_total", "Number of generation tokens processed.", gen},
	} {
		if c.v > 0 {
			dst = appendHeader(dst, name(c.n), c.help, "counter")
			dst = appendSample(dst, name(c.n), "", base, float64(c.v))
		}
	}
	var running, waiting int
	var usage float64
	for _, s := range v.Engines {
		running += s.Running
		waiting += s.Waiting
		usage += s.KVUsage
	}
	usage /= float64(max(len(v.Engines), 1))
	gauges := [...]struct {
		n, help string
		v       float64
	}{
		{"num_requests_running", "Number of requests currently running.", float64(running)},
		{"num_requests_waiting", "Number of requests waiting to be scheduled.", float64(waiting)},
		{"kv_cache_utilization", "KV cache utilization (used blocks / max blocks).", usage},
	}
	for _, g := range gauges {
		dst = appendHeader(dst, name(g.n), g.help, "gauge")
		dst = appendSample(dst, name(g.n), "", base, g.v)
	}
	dst = trtIterationGauges(dst, v, base)
	n := name("num_requests_completed_total")
	dst = appendHeader(dst, n, "Number of completed requests (from iteration stats).", "counter")
	return appendSample(dst, n, "", base, float64(done))
}

// trtHistFamily merges the DP engines' histograms (one registry per
// worker). time_per_output_token_seconds is observed once per finished
// request with more than one token: every running request gets one token per
// generation step, so each such request's TPOT is exactly the step time.
func trtHistFamily(dst []byte, v *InstanceView, base []label, name string, h trtHist) []byte {
	var count uint64
	var sum float64
	var tbl *bucketTable
	var tpot Histogram
	if h.get == nil {
		if v.Role != RoleDecode {
			return dst
		}
		tpot = newHistogram(vllmITLBuckets)
		step := v.Group.Decode.StepTime.Seconds()
		for _, s := range v.Engines {
			if s.GenLen.count > 0 && s.GenLen.sum > float64(s.GenLen.count) { // > 1 token each
				tpot.observeN(step, s.GenLen.count)
			}
		}
		if tpot.count == 0 {
			return dst
		}
		count, sum, tbl = tpot.count, tpot.sum, tpot.tbl
		dst = appendHeader(dst, name, h.help, "histogram")
		dst = appendSample(dst, name, "_sum", base, sum)
		var acc uint64
		for i, le := range tbl.le {
			acc += tpot.counts[i]
			dst = appendSample(dst, name, "_bucket", base, float64(acc), label{"le", le})
		}
		return appendSample(dst, name, "_count", base, float64(count))
	}
	for _, s := range v.Engines {
		hist := h.get(s)
		count += hist.count
		sum += hist.sum
		if hist.tbl != nil {
			tbl = hist.tbl
		}
	}
	if count == 0 || tbl == nil {
		return dst
	}
	dst = appendHeader(dst, name, h.help, "histogram")
	dst = appendSample(dst, name, "_sum", base, sum)
	var acc uint64
	for i, le := range tbl.le {
		for _, s := range v.Engines {
			if hist := h.get(s); hist.tbl != nil {
				acc += hist.counts[i]
			}
		}
		dst = appendSample(dst, name, "_bucket", base, float64(acc), label{"le", le})
	}
	return appendSample(dst, name, "_count", base, float64(acc))
}

// trtIterationGauges prints the iteration gauges of the newest iteration
// logged (log_iteration_stats): its latency, once there was one, its context
// and generation requests and the KV cache in blocks, the attention-DP
// ranks' requests and blocks added; the worker's batch limit
// (maxNumActiveRequests, the ranks' max_batch_size added) and the share of
// it the iteration's context requests took (prefill_batch_occupancy).
func trtIterationGauges(dst []byte, v *InstanceView, base []label) []byte {
	maxActive := float64(trtMaxActive(v.Group, v.Role) * len(v.Engines))
	var latency float64
	var ctx, gen, total, used, size int
	for _, s := range v.Engines {
		latency = max(latency, s.LastIterSec)
		ctx += s.CtxReqs
		gen += s.GenReqs
		total += s.KVBlocksMax
		used += s.KVBlocksUsed
		size = s.KVBlockTokens
	}
	gauges := [...]struct {
		n, help string
		v       float64
	}{
		{"trtllm_iteration_latency_seconds", "Iteration latency in seconds", latency},
		{"trtllm_kv_cache_max_blocks", "Maximum number of KV cache blocks", float64(total)},
		{"trtllm_kv_cache_free_blocks", "Number of free KV cache blocks", float64(total - used)},
		{"trtllm_kv_cache_used_blocks", "Number of used KV cache blocks", float64(used)},
		{"trtllm_kv_cache_tokens_per_block", "Number of tokens per KV cache block", float64(size)},
		{"trtllm_num_context_requests", "Number of context (prefill) requests", float64(ctx)},
		{"trtllm_num_generation_requests", "Number of generation (decode) requests", float64(gen)},
		{"trtllm_max_num_active_requests", "Maximum number of active requests", maxActive},
		{"trtllm_prefill_batch_occupancy", "Fraction of max active slots occupied by context requests.", float64(ctx) / maxActive},
	}
	for i, g := range gauges {
		if i == 0 && latency == 0 { // no iteration logged yet
			continue
		}
		dst = appendHeader(dst, g.n, g.help, "gauge")
		dst = appendSample(dst, g.n, "", base, g.v)
	}
	return dst
}

// trtMaxActive is one rank's maxNumActiveRequests: its role's batch limit
// (decode's max_batch, the limit MaxNumSeqs gives per rank; prefill's,
// the context requests it batches at once).
func trtMaxActive(g Group, role string) int {
	if role == RolePrefill {
		return g.Prefill.MaxBatch
	}
	return g.Decode.MaxBatch
}
