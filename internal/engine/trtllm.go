package engine

import (
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// TensorRT-LLM's /prometheus/metrics (docs/engines.md#tensorrt-llm): names carry the
// trtllm_ prefix in newer builds and none in older ones (and Dynamo adds the
// prefix to the old names), so both spellings map alike. Labels model_name
// and engine_type may literally read "undefined".
var trtllmCounters = map[string]rule{
	"request_success_total":        {metric: Completed},
	"num_requests_completed_total": {metric: Completed, fallback: true},
	"prompt_tokens_total":          {metric: PromptTokens},
	"generation_tokens_total":      {metric: GenerationTokens},
	"kv_transfer_success_total":    {metric: KVTransfers, kv: KVDynamo, fallback: true},
	"kv_transfer_failure_total":    {metric: KVFailures, kv: KVDynamo},
	"num_aborted_requests_total":   {metric: Aborted},
	"request_error_total":          {metric: Errored},
}

var trtllmGauges = map[string]rule{
	"num_requests_running": {metric: Running},
	"num_requests_waiting": {metric: Waiting},
	"kv_cache_utilization": {metric: KVUsage},
}

var trtllmHistograms = map[string]rule{
	"time_to_first_token_seconds":   {metric: TTFT},
	"time_per_output_token_seconds": {metric: ITL},
	"e2e_request_latency_seconds":   {metric: E2E},
	"request_queue_time_seconds":    {metric: QueueTime},
	"request_prefill_time_seconds":  {metric: PrefillTime},
	"request_decode_time_seconds":   {metric: DecodeTime},
	"kv_transfer_latency_seconds":   {metric: KVXferTime, kv: KVDynamo},
}

// The trtllm-serve disaggregated front server counts completions per phase,
// one series per role and none per worker (docs/engines.md#disaggregated-front-server). Point a
// prefill target and a decode target at the same URL to read both.
var trtllmDisagg = map[string]Role{
	"ctx_completed_requests_total": Prefill,
	"gen_completed_requests_total": Decode,
}

// trtllmName strips the optional prefix; ok is false for names that are not
// TensorRT-LLM's.
func trtllmName(name string) (string, bool) {
	if s, ok := strings.CutPrefix(name, "trtllm_"); ok {
		return s, true
	}
	base, _, _ := splitHistogram(name)
	_, c := trtllmCounters[name]
	_, g := trtllmGauges[name]
	_, h := trtllmHistograms[base]
	_, d := trtllmDisagg[name]
	return name, c || g || h || d
}

// trtllmFinished: finish reasons that are not completions.
func trtllmFinished(reason string) (Metric, bool) {
	switch reason {
	case "abort", "aborted", "error", "cancelled", "canceled", "timeout":
		return Aborted, true
	}
	return Completed, false
}

func classifyTRTLLM(full string, t model.MetricType, ls labels.Labels, role Role) binding {
	name, _ := trtllmName(full)
	modelName := ls.Get("model_name")
	if modelName == "undefined" {
		modelName = ""
	}
	b := binding{engine: TensorRTLLM, rank: -1, model: modelName, family: full}
	b.group = hashString(0, ls.Get("dp_rank"))
	if nb, ok := plain(b, name, t, ls, trtllmCounters, trtllmGauges, trtllmFinished); ok {
		nb.family = full
		return nb
	}
	if want, ok := trtllmDisagg[name]; ok {
		if role == RoleUnknown {
			return skip(full, "disaggregated front server: give the target a role (prefill reads ctx_*, decode reads gen_*)")
		}
		if role != want {
			return skip(full, "counts the "+string(want)+" phase; add this URL as a "+string(want)+" target to read it")
		}
		return bind(b, rule{metric: Completed}, partValue, ls)
	}
	base, p, isHist := splitHistogram(name)
	if !isHist {
		return skip(full, "not used by ptdmon")
	}
	b.family = strings.TrimSuffix(full, strings.TrimPrefix(name, base))
	if !declared(t, model.MetricTypeHistogram) {
		return wrongType(b.family, model.MetricTypeHistogram, t)
	}
	if base == "kv_transfer_bytes" {
		// Dynamo's per-request KV size histogram (from TensorRT-LLM's
		// timing_metrics.kv_cache_size): _sum is a bytes counter.
		switch p {
		case partSum:
			return bind(b, rule{metric: KVBytes, kv: KVDynamo}, partValue, ls)
		case partCount:
			return bind(b, rule{metric: KVTransfers, kv: KVDynamo}, partValue, ls)
		}
		return skip(b.family, "per-request size buckets are not needed; _sum and _count are read")
	}
	if r, ok := trtllmHistograms[base]; ok {
		return bind(b, r, p, ls)
	}
	return skip(b.family, "not used by ptdmon")
}
