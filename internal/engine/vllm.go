package engine

import "github.com/prometheus/common/model"

// VLLM is vLLM (V1 engine): every family carries the vllm: prefix.
const VLLM Engine = "vllm"

// whyOffload is why the KV offload families are not read.
const whyOffload = "KV offload between cache tiers (GPU, CPU, disk), never P/D transfer bytes"

// vLLM's names (https://docs.vllm.ai/en/latest/design/metrics.html). Labels:
// model_name, engine (the data-parallel engine core: cores add up), and
// finished_reason on request_success_total. Deprecated names are version
// renames: vLLM 0.9–0.10 export both for the same quantity, so the old one
// is read only where the new one is absent. The KV connectors' families
// (FlagCX, NIXL, Mooncake) are in their own files.
func init() {
	Register(Adapter{
		Engine:        VLLM,
		Display:       "vLLM",
		Order:         10,
		Prefix:        "vllm:",
		ModelLabel:    "model_name",
		GroupLabels:   []string{"engine"},
		FinishedLabel: "finished_reason",
		// Completions exclude aborted and failed requests; every other
		// finished_reason (stop, length, repetition, …) counts.
		NotCompleted: []Reason{{"abort", Aborted}, {"error", Errored}},
		// llm-d-inference-sim, which imitates vLLM, labels
		// request_success_total with finish_reason
		// (https://github.com/llm-d/llm-d-inference-sim/blob/a38361e05ffb5ecf3e85c9885be0e16e2d745ce1/pkg/llm-d-inference-sim/metrics.go,
		// vllmapi.PromLabelFinishReason).
		FinishedAliases: []string{"finish_reason"},
		LatencyPanels:   true,
		Families: []Family{
			{Name: "vllm:request_success_total", Type: model.MetricTypeCounter, Metric: Completed, Finished: true},
			{Name: "vllm:prompt_tokens_total", Type: model.MetricTypeCounter, Metric: PromptTokens},
			// Prompt tokens by where their KV came from (PR #33290). On a
			// decode instance, local_compute is prefill work decode did
			// itself: after a failed KV load (recompute) or for a request
			// that skipped prefill.
			{Name: "vllm:prompt_tokens_by_source_total", Type: model.MetricTypeCounter, ByLabel: "source", ByValue: []Reason{
				{"local_compute", PromptTokensComputed},
				{"local_cache_hit", PromptTokensCached},
				{"external_kv_transfer", PromptTokensTransferred},
			}},
			{Name: "vllm:prompt_tokens_cached_total", Type: model.MetricTypeCounter,
				Skip: "local and external cache hits together; vllm:prompt_tokens_by_source_total splits them and is read instead"},
			{Name: "vllm:generation_tokens_total", Type: model.MetricTypeCounter, Metric: GenerationTokens},
			{Name: "vllm:num_preemptions_total", Type: model.MetricTypeCounter, Metric: Preemptions},
			{Name: "vllm:prefix_cache_queries_total", Type: model.MetricTypeCounter, Metric: PrefixQueries},
			{Name: "vllm:prefix_cache_hits_total", Type: model.MetricTypeCounter, Metric: PrefixHits},
			{Name: "vllm:gpu_prefix_cache_queries_total", Type: model.MetricTypeCounter, Metric: PrefixQueries, Deprecated: true},
			{Name: "vllm:gpu_prefix_cache_hits_total", Type: model.MetricTypeCounter, Metric: PrefixHits, Deprecated: true},

			{Name: "vllm:num_requests_running", Type: model.MetricTypeGauge, Metric: Running},
			{Name: "vllm:num_requests_waiting", Type: model.MetricTypeGauge, Metric: Waiting},
			// The waiting split by reason (PR #38435): not yet scheduled for
			// lack of capacity, or deferred by a transient constraint (remote
			// KV not arrived, LoRA budget). The two add up to the waiting gauge.
			{Name: "vllm:num_requests_waiting_by_reason", Type: model.MetricTypeGauge, ByLabel: "reason", ByValue: []Reason{
				{"capacity", WaitingCapacity},
				{"deferred", WaitingDeferred},
			}},
			// Requests the API server refused (503) when max_num_queued_reqs or
			// max_num_queued_tokens was reached (PR #55812, open; the caps are
			// PR #49445): shed before the engine queued them. No engine label.
			{Name: "vllm:admission_rejections_total", Type: model.MetricTypeCounter, Metric: Shed},
			{Name: "vllm:kv_cache_usage_perc", Type: model.MetricTypeGauge, Metric: KVUsage},
			{Name: "vllm:gpu_cache_usage_perc", Type: model.MetricTypeGauge, Metric: KVUsage, Deprecated: true},
			// The KV cache's configuration as an info gauge (value 1): its
			// size in blocks and the tokens per block are label values.
			{Name: "vllm:cache_config_info", Type: model.MetricTypeGauge, Metric: KVBlocks, FromLabels: []LabelValue{
				{"num_gpu_blocks", KVBlocks}, {"block_size", KVBlockSize},
			}},

			{Name: "vllm:time_to_first_token_seconds", Type: model.MetricTypeHistogram, Metric: TTFT},
			{Name: "vllm:inter_token_latency_seconds", Type: model.MetricTypeHistogram, Metric: ITL},
			{Name: "vllm:time_per_output_token_seconds", Type: model.MetricTypeHistogram, Metric: ITL, Deprecated: true},
			{Name: "vllm:e2e_request_latency_seconds", Type: model.MetricTypeHistogram, Metric: E2E},
			{Name: "vllm:request_queue_time_seconds", Type: model.MetricTypeHistogram, Metric: QueueTime},
			{Name: "vllm:request_prefill_time_seconds", Type: model.MetricTypeHistogram, Metric: PrefillTime},
			{Name: "vllm:request_decode_time_seconds", Type: model.MetricTypeHistogram, Metric: DecodeTime},
			// Per request, the prefill tokens computed here, cache hits and
			// transferred KV excluded (PR #30189).
			{Name: "vllm:request_prefill_kv_computed_tokens", Type: model.MetricTypeHistogram, Metric: PrefillKVComputedTokens},
			// KV offload (OffloadingConnector, GPU ↔ CPU; PR #27942): under a
			// MultiConnector beside NIXL, the same exposition carries P/D and
			// offload traffic, and only the P/D connector's bytes are KV
			// transfer.
			{Name: "vllm:kv_offload_total_bytes_total", Type: model.MetricTypeCounter, Skip: whyOffload},
			{Name: "vllm:kv_offload_total_bytes", Type: model.MetricTypeCounter, Skip: whyOffload},
			{Name: "vllm:kv_offload_total_time_total", Type: model.MetricTypeCounter, Skip: whyOffload},
			{Name: "vllm:kv_offload_total_time", Type: model.MetricTypeCounter, Skip: whyOffload},
			{Name: "vllm:kv_offload_size", Type: model.MetricTypeHistogram, Skip: whyOffload},
			// Sleep mode (PR #24176): a state set, one series per engine
			// and sleep_state, 1 on the engine's state. An engine with
			// awake at 0 sleeps on purpose (weights offloaded or
			// discarded, the KV cache gone): not serving, neither down nor
			// stalled.
			{Name: "vllm:engine_sleep_state", Type: model.MetricTypeGauge, ByLabel: "sleep_state", ByValue: []Reason{
				{"awake", EnginesAwake},
				{"weights_offloaded", EnginesWeightsOffloaded},
				{"discard_all", EnginesDiscardAll},
			}},
			// Tokens per engine step, a histogram despite its name: its
			// count is the steps run, its sum the tokens they processed.
			{Name: "vllm:iteration_tokens_total", Type: model.MetricTypeHistogram, Metric: IterationTokens},
		},
	})
}
