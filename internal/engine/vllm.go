package engine

import (
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// vLLM V1 names (docs/engines.md#vllm). Deprecated names are
// fallbacks: read only when the current name is absent, since vLLM 0.9–0.10
// export both for the same quantity.
var vllmCounters = map[string]rule{
	"vllm:request_success_total":          {metric: Completed},
	"vllm:prompt_tokens_total":            {metric: PromptTokens},
	"vllm:generation_tokens_total":        {metric: GenerationTokens},
	"vllm:num_preemptions_total":          {metric: Preemptions},
	"vllm:prefix_cache_queries_total":     {metric: PrefixQueries},
	"vllm:prefix_cache_hits_total":        {metric: PrefixHits},
	"vllm:gpu_prefix_cache_queries_total": {metric: PrefixQueries, fallback: true},
	"vllm:gpu_prefix_cache_hits_total":    {metric: PrefixHits, fallback: true},

	// FlagCX counts on the prefill (sending) side, docs/engines.md#flagcx-vllm-plugin.
	"vllm:flagcx_total_bytes_transferred_total": {metric: KVBytes, kv: KVFlagCX},
	"vllm:flagcx_transfers_total":               {metric: KVTransfers, kv: KVFlagCX},
	"vllm:flagcx_num_failed_transfers_total":    {metric: KVFailures, kv: KVFlagCX},
	"vllm:flagcx_num_failed_recvs_total":        {metric: KVFailures, kv: KVFlagCX},
	"vllm:flagcx_num_kv_expired_reqs_total":     {metric: KVExpired, kv: KVFlagCX},

	// NIXL pulls from the decode side; its bytes are a histogram (below).
	"vllm:nixl_num_failed_transfers_total": {metric: KVFailures, kv: KVNIXL},
	"vllm:nixl_num_kv_expired_reqs_total":  {metric: KVExpired, kv: KVNIXL},

	// vLLM-Ascend's Mooncake connector.
	"vllm:mooncake_num_failed_transfers_total": {metric: KVFailures, kv: KVMooncake},
}

var vllmGauges = map[string]rule{
	"vllm:num_requests_running": {metric: Running},
	"vllm:num_requests_waiting": {metric: Waiting},
	"vllm:kv_cache_usage_perc":  {metric: KVUsage},
	"vllm:gpu_cache_usage_perc": {metric: KVUsage, fallback: true},
}

// vllmHistograms maps a histogram family to the canonical histogram, or, for
// the connectors' per-transfer byte histograms, to counters read from _sum
// (bytes) and _count (transfers).
var vllmHistograms = map[string]rule{
	"vllm:time_to_first_token_seconds":   {metric: TTFT},
	"vllm:inter_token_latency_seconds":   {metric: ITL},
	"vllm:time_per_output_token_seconds": {metric: ITL, fallback: true},
	"vllm:e2e_request_latency_seconds":   {metric: E2E},
	"vllm:request_queue_time_seconds":    {metric: QueueTime},
	"vllm:request_prefill_time_seconds":  {metric: PrefillTime},
	"vllm:request_decode_time_seconds":   {metric: DecodeTime},
	"vllm:flagcx_xfer_time_seconds":      {metric: KVXferTime, kv: KVFlagCX},
	"vllm:nixl_xfer_time_seconds":        {metric: KVXferTime, kv: KVNIXL},
	"vllm:mooncake_xfer_time_seconds":    {metric: KVXferTime, kv: KVMooncake},
}

var vllmByteHistograms = map[string]KVSource{
	"vllm:nixl_bytes_transferred":     KVNIXL,
	"vllm:mooncake_bytes_transferred": KVMooncake,
}

// vllmFinished: completions exclude aborted and failed requests (docs/engines.md#vllm);
// every other finished_reason (stop, length, repetition, …) counts.
func vllmFinished(reason string) (Metric, bool) {
	switch reason {
	case "abort":
		return Aborted, true
	case "error":
		return Errored, true
	}
	return Completed, false
}

// classifyVLLM maps one vllm: series. Labels: model_name, engine (DP index),
// finished_reason on request_success_total.
func classifyVLLM(name string, t model.MetricType, ls labels.Labels) binding {
	b := binding{engine: VLLM, rank: -1, model: ls.Get("model_name"), family: name}
	b.group = hashString(0, ls.Get("engine"))
	if nb, ok := plain(b, name, t, ls, vllmCounters, vllmGauges, vllmFinished); ok {
		return nb
	}
	base, p, isHist := splitHistogram(name)
	if !isHist {
		return skip(name, "not used by ptdmon")
	}
	b.family = base
	if !declared(t, model.MetricTypeHistogram) {
		return wrongType(base, model.MetricTypeHistogram, t)
	}
	if r, ok := vllmHistograms[base]; ok {
		return bind(b, r, p, ls)
	}
	if kv, ok := vllmByteHistograms[base]; ok {
		switch p {
		case partSum:
			return bind(b, rule{metric: KVBytes, kv: kv}, partValue, ls)
		case partCount:
			// Counts rank-level transfers (pooled over TP workers), not requests.
			return bind(b, rule{metric: KVTransfers, kv: kv}, partValue, ls)
		}
		return skip(base, "per-transfer size buckets are not needed; _sum and _count are read")
	}
	if base == "vllm:flagcx_bytes_transferred" {
		return skip(base, "duplicates vllm:flagcx_total_bytes_transferred_total, which is read instead")
	}
	return skip(base, "not used by ptdmon")
}
