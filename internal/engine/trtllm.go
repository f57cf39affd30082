package engine

import "github.com/prometheus/common/model"

// TensorRTLLM is TensorRT-LLM's /prometheus/metrics.
const TensorRTLLM Engine = "trtllm"

// FormatIterationStats is the JSON array of IterationStats records a
// TensorRT-LLM worker serves at /metrics with enable_iter_perf_stats
// (docs/iterstats.md); package iterstats registers its reader.
const FormatIterationStats Format = "iteration_stats"

// TensorRT-LLM's names (https://github.com/NVIDIA/TensorRT-LLM, in
// tensorrt_llm/metrics/collector.py): newer builds
// write the trtllm_ prefix, older ones none (and Dynamo adds the prefix to
// the old names), so both spellings map alike. model_name and engine_type
// may literally read "undefined". The trtllm-serve disaggregated front
// server counts completions per phase, one series per role and none per
// worker: point a prefill target and a decode target at the same URL to
// read both. Dynamo's KV-transfer families are in dynamo.go.
func init() {
	Register(Adapter{
		Engine:         TensorRTLLM,
		Aliases:        []string{"tensorrt-llm", "tensorrt_llm"},
		Display:        "TensorRT-LLM",
		Order:          30,
		Prefix:         "trtllm_",
		PrefixOptional: true,
		ModelLabel:     "model_name",
		Unset:          "undefined",
		GroupLabels:    []string{"dp_rank"},
		FinishedLabel:  "finished_reason",
		NotCompleted: []Reason{
			{"abort", Aborted}, {"aborted", Aborted}, {"error", Aborted},
			{"cancelled", Aborted}, {"canceled", Aborted}, {"timeout", Aborted},
		},
		Families: []Family{
			{Name: "trtllm_request_success_total", Type: model.MetricTypeCounter, Metric: Completed, Finished: true},
			// Counted per iteration; only for builds without per-request stats.
			{Name: "trtllm_num_requests_completed_total", Type: model.MetricTypeCounter, Metric: Completed, Deprecated: true},
			{Name: "trtllm_prompt_tokens_total", Type: model.MetricTypeCounter, Metric: PromptTokens},
			{Name: "trtllm_generation_tokens_total", Type: model.MetricTypeCounter, Metric: GenerationTokens},
			{Name: "trtllm_num_aborted_requests_total", Type: model.MetricTypeCounter, Metric: Aborted},
			{Name: "trtllm_request_error_total", Type: model.MetricTypeCounter, Metric: Errored},
			{Name: "ctx_completed_requests_total", Type: model.MetricTypeCounter, Metric: Completed, Role: Prefill},
			{Name: "gen_completed_requests_total", Type: model.MetricTypeCounter, Metric: Completed, Role: Decode},

			{Name: "trtllm_num_requests_running", Type: model.MetricTypeGauge, Metric: Running},
			{Name: "trtllm_num_requests_waiting", Type: model.MetricTypeGauge, Metric: Waiting},
			{Name: "trtllm_kv_cache_utilization", Type: model.MetricTypeGauge, Metric: KVUsage},
			// Iteration statistics of the newest iteration logged (a gauge:
			// the last iteration's latency, not a sum of them), the batch's
			// context and generation requests, and the KV cache in blocks.
			{Name: "trtllm_iteration_latency_seconds", Type: model.MetricTypeGauge, Metric: IterationLatency, PrefixOnly: true},
			{Name: "trtllm_num_context_requests", Type: model.MetricTypeGauge, Metric: ContextRequests, PrefixOnly: true},
			{Name: "trtllm_num_generation_requests", Type: model.MetricTypeGauge, Metric: GenerationRequests, PrefixOnly: true},
			{Name: "trtllm_kv_cache_max_blocks", Type: model.MetricTypeGauge, Metric: KVBlocks, PrefixOnly: true},
			{Name: "trtllm_kv_cache_free_blocks", Type: model.MetricTypeGauge, Metric: KVBlocksFree, PrefixOnly: true},
			{Name: "trtllm_kv_cache_used_blocks", Type: model.MetricTypeGauge, Metric: KVBlocksUsed, PrefixOnly: true},
			{Name: "trtllm_kv_cache_tokens_per_block", Type: model.MetricTypeGauge, Metric: KVBlockSize, PrefixOnly: true},
			// The engine's own batch limit (the iteration's
			// maxNumActiveRequests): decode's batch limit where the target
			// gives no max_num_seqs.
			{Name: "trtllm_max_num_active_requests", Type: model.MetricTypeGauge, Metric: MaxActiveRequests, PrefixOnly: true},
			// numContextRequests ÷ maxNumActiveRequests of the newest
			// iteration (PR #12636): both are read above.
			{Name: "trtllm_prefill_batch_occupancy", Type: model.MetricTypeGauge, PrefixOnly: true, Skip: "the newest iteration's num_context_requests ÷ max_num_active_requests, both read"},

			// KV offload and onboarding between the cache tiers (GPU, host,
			// disk; PR #12413): never P/D transfer bytes.
			{Name: "trtllm_kv_cache_onboard_bytes_total", Type: model.MetricTypeCounter, PrefixOnly: true, Skip: whyOffload},
			{Name: "trtllm_kv_cache_offload_bytes_total", Type: model.MetricTypeCounter, PrefixOnly: true, Skip: whyOffload},

			{Name: "trtllm_time_to_first_token_seconds", Type: model.MetricTypeHistogram, Metric: TTFT},
			{Name: "trtllm_time_per_output_token_seconds", Type: model.MetricTypeHistogram, Metric: ITL},
			{Name: "trtllm_e2e_request_latency_seconds", Type: model.MetricTypeHistogram, Metric: E2E},
			{Name: "trtllm_request_queue_time_seconds", Type: model.MetricTypeHistogram, Metric: QueueTime},
			{Name: "trtllm_request_prefill_time_seconds", Type: model.MetricTypeHistogram, Metric: PrefillTime},
			{Name: "trtllm_request_decode_time_seconds", Type: model.MetricTypeHistogram, Metric: DecodeTime},
		},
	})
}
