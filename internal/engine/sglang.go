package engine

import (
	"strconv"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// SGLang names (docs/engines.md#sglang).
var sglangCounters = map[string]rule{
	// Tokenizer side: finished requests, success or failure. On a prefill
	// instance a request finishes only after its KV transfer (docs/engines.md#sglang).
	"sglang:num_requests_total":              {metric: Completed},
	"sglang:prompt_tokens_total":             {metric: PromptTokens},
	"sglang:generation_tokens_total":         {metric: GenerationTokens},
	"sglang:num_aborted_requests_total":      {metric: Aborted},
	"sglang:num_retracted_requests_total":    {metric: Retracted},
	"sglang:num_bootstrap_failed_reqs_total": {metric: BootstrapFailed},
	"sglang:num_transfer_failed_reqs_total":  {metric: KVFailures, kv: KVSGLang},
}

var sglangGauges = map[string]rule{
	"sglang:num_running_reqs":                 {metric: Running},
	"sglang:num_queue_reqs":                   {metric: Waiting},
	"sglang:num_prefill_bootstrap_queue_reqs": {metric: QueueBootstrap},
	"sglang:num_prefill_prealloc_queue_reqs":  {metric: QueueBootstrap, fallback: true},
	"sglang:num_prefill_inflight_queue_reqs":  {metric: QueueInflight},
	"sglang:num_decode_prealloc_queue_reqs":   {metric: QueuePrealloc},
	"sglang:num_decode_transfer_queue_reqs":   {metric: QueueTransfer},
	"sglang:token_usage":                      {metric: KVUsage},
	"sglang:num_retracted_reqs":               {metric: RetractedNow},
}

var sglangHistograms = map[string]rule{
	"sglang:time_to_first_token_seconds":   {metric: TTFT},
	"sglang:inter_token_latency_seconds":   {metric: ITL},
	"sglang:time_per_output_token_seconds": {metric: ITL, fallback: true},
	"sglang:e2e_request_latency_seconds":   {metric: E2E},
	"sglang:queue_time_seconds":            {metric: QueueTime},
	"sglang:kv_transfer_latency_ms":        {metric: KVXferTime, kv: KVSGLang, leScale: 1e-3},
}

const mebibyte = 1 << 20

// classifySGLang maps one sglang: series. Scheduler-side series carry
// tp_rank/pp_rank (only the lowest rank of a DP group counts: every rank
// reports the same requests) and dp_rank or pid (separate processes, which add up).
func classifySGLang(name string, t model.MetricType, ls labels.Labels) binding {
	b := binding{engine: SGLang, rank: -1, model: ls.Get("model_name"), family: name}
	switch ls.Get("engine_type") {
	case "prefill":
		b.role = Prefill
	case "decode":
		b.role = Decode
	}
	if p := ls.Get("priority"); p != "" {
		return skip(name, "per-priority series; the totals are the series with priority=\"\"")
	}
	b.group = hashString(hashString(0, ls.Get("dp_rank")), ls.Get("pid"))
	if tp, pp := ls.Get("tp_rank"), ls.Get("pp_rank"); tp != "" || pp != "" {
		b.rank = int32(atoiOr(pp, 0)<<16 | atoiOr(tp, 0))
	}
	if nb, ok := plain(b, name, t, ls, sglangCounters, sglangGauges, nil); ok {
		return nb
	}
	if name == "sglang:kv_transfer_total_mb" {
		// Before SGLang PR #19009 this was a gauge holding the last request's
		// size: no cumulative byte count can be derived from it.
		b := skip(name, "a gauge in this SGLang version (last request's MB), not a cumulative byte counter: unusable for KV bytes/s")
		b.note = true
		return b
	}
	base, p, isHist := splitHistogram(name)
	if !isHist {
		return skip(name, "not used by ptdmon")
	}
	b.family = base
	if !declared(t, model.MetricTypeHistogram) {
		return wrongType(base, model.MetricTypeHistogram, t)
	}
	if base == "sglang:kv_transfer_total_mb" {
		switch p {
		case partSum:
			return bind(b, rule{metric: KVBytes, kv: KVSGLang, scale: mebibyte}, partValue, ls)
		case partCount:
			return bind(b, rule{metric: KVTransfers, kv: KVSGLang}, partValue, ls)
		}
		return skip(base, "per-request size buckets are not needed; _sum and _count are read")
	}
	if r, ok := sglangHistograms[base]; ok {
		return bind(b, r, p, ls)
	}
	return skip(base, "not used by ptdmon")
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 0xffff {
		return def
	}
	return n
}
