package engine

import "github.com/prometheus/common/model"

// SGLang is SGLang: every family carries the sglang: prefix.
const SGLang Engine = "sglang"

// KVSGLang is SGLang's own disaggregation transfer metrics, counted on the
// prefill (sending) side.
const KVSGLang KVSource = "sglang"

const mebibyte = 1 << 20

// SGLang's names (https://github.com/sgl-project/sglang, in
// python/sglang/srt/observability/metrics_collector.py, formerly
// python/sglang/srt/metrics/collector.py). Scheduler-side series carry
// tp_rank/pp_rank (every rank of a DP group reports the same requests: only
// the lowest counts) and dp_rank or pid (separate processes, which add up);
// engine_type tells the role of a disaggregated instance.
func init() {
	Register(Adapter{
		Engine:      SGLang,
		Display:     "SGLang",
		Order:       20,
		Prefix:      "sglang:",
		ModelLabel:  "model_name",
		RoleLabel:   "engine_type",
		GroupLabels: []string{"dp_rank", "pid"},
		RankLabels:  []string{"tp_rank", "pp_rank"},
		SplitLabels: []string{"priority"},
		// Decode's num_queue_reqs holds requests whose KV has arrived; the
		// prealloc and transfer queues hold the others.
		WaitingKVReady: true,
		// The router sends each request to prefill and decode at once:
		// decode's TTFT and E2E start at the request's arrival.
		DecodeFromArrival: true,
		LatencyPanels:     true,
		Families: []Family{
			// Tokenizer side: finished requests, success or failure. On a
			// prefill instance a request finishes only after its KV transfer.
			{Name: "sglang:num_requests_total", Type: model.MetricTypeCounter, Metric: Completed},
			{Name: "sglang:prompt_tokens_total", Type: model.MetricTypeCounter, Metric: PromptTokens},
			{Name: "sglang:generation_tokens_total", Type: model.MetricTypeCounter, Metric: GenerationTokens},
			{Name: "sglang:num_aborted_requests_total", Type: model.MetricTypeCounter, Metric: Aborted},
			{Name: "sglang:num_retracted_requests_total", Type: model.MetricTypeCounter, Metric: Retracted},
			{Name: "sglang:num_bootstrap_failed_reqs_total", Type: model.MetricTypeCounter, Metric: BootstrapFailed},
			{Name: "sglang:num_prefill_retries_total", Type: model.MetricTypeCounter, Metric: PrefillRetries},
			// Requests dropped from the waiting queue (503) before they ran,
			// by reason: queue_full, priority_preempted, waiting_timeout (PR
			// #34320, open); only the reporting TP rank counts them.
			{Name: "sglang:num_queue_rejected_requests_total", Type: model.MetricTypeCounter, Metric: Shed},

			{Name: "sglang:num_running_reqs", Type: model.MetricTypeGauge, Metric: Running},
			{Name: "sglang:num_queue_reqs", Type: model.MetricTypeGauge, Metric: Waiting},
			{Name: "sglang:num_prefill_bootstrap_queue_reqs", Type: model.MetricTypeGauge, Metric: QueueBootstrap},
			// The bootstrap queue's name before it was renamed.
			{Name: "sglang:num_prefill_prealloc_queue_reqs", Type: model.MetricTypeGauge, Metric: QueueBootstrap, Deprecated: true},
			{Name: "sglang:num_prefill_inflight_queue_reqs", Type: model.MetricTypeGauge, Metric: QueueInflight},
			{Name: "sglang:num_decode_prealloc_queue_reqs", Type: model.MetricTypeGauge, Metric: QueuePrealloc},
			{Name: "sglang:num_decode_transfer_queue_reqs", Type: model.MetricTypeGauge, Metric: QueueTransfer},
			{Name: "sglang:token_usage", Type: model.MetricTypeGauge, Metric: KVUsage},
			{Name: "sglang:num_retracted_reqs", Type: model.MetricTypeGauge, Metric: RetractedNow},

			// Busy time. The scheduler's idle wall seconds (PR #37461),
			// and its wall seconds split into mutually exclusive stages by
			// category (PR #37636): the idle stage is read only where the
			// idle counter is absent. The GPU's forward occupancy over the
			// last log window (PR #24458), a percentage (NaN, so absent,
			// once idle).
			{Name: "sglang:scheduler_idle_seconds_total", Type: model.MetricTypeCounter, Metric: SchedulerIdle},
			{Name: "sglang:scheduler_stage_seconds_total", Type: model.MetricTypeCounter, ByLabel: "category",
				ByFallback: []Reason{{"idle", SchedulerIdle}}},
			{Name: "sglang:fwd_occupancy", Type: model.MetricTypeGauge, Metric: ForwardOccupancy, Scale: 0.01},

			{Name: "sglang:time_to_first_token_seconds", Type: model.MetricTypeHistogram, Metric: TTFT},
			{Name: "sglang:inter_token_latency_seconds", Type: model.MetricTypeHistogram, Metric: ITL},
			{Name: "sglang:time_per_output_token_seconds", Type: model.MetricTypeHistogram, Metric: ITL, Deprecated: true},
			{Name: "sglang:e2e_request_latency_seconds", Type: model.MetricTypeHistogram, Metric: E2E},
			{Name: "sglang:queue_time_seconds", Type: model.MetricTypeHistogram, Metric: QueueTime},
			// The time a request spent in each stage (PR #36374; the stage
			// names are RequestStage in python/sglang/srt/managers/
			// schedule_batch.py): each is the time since the previous stage
			// ended. The ones that split TTFT are read, per role.
			{Name: "sglang:per_stage_req_latency_seconds", Type: model.MetricTypeHistogram, ByLabel: "stage", ByValue: []Reason{
				{"prefill_waiting", StageWaiting},
				{"decode_waiting", StageWaiting},
				{"prefill_bootstrap", StageBootstrap},
				{"decode_bootstrap", StageBootstrap},
				// decode_bootstrap split in two (the handshake, then the wait
				// for KV allocation): the bootstrap phase is their sum.
				{"decode_bootstrap_handshake", StageBootstrap},
				{"decode_kv_allocation_wait", StageAllocWait},
				{"prefill_forward", StageForward},
				{"prefill_transfer_kv_cache", StageKVTransfer},
				{"decode_transferred", StageKVTransfer},
			}},
		},
	})
	RegisterConnector(Connector{
		Source:  KVSGLang,
		Display: "SGLang",
		Engine:  SGLang,
		Order:   40,
		Families: []Family{
			{Name: "sglang:num_transfer_failed_reqs_total", Type: model.MetricTypeCounter, Metric: KVFailures},
			{Name: "sglang:kv_transfer_latency_ms", Type: model.MetricTypeHistogram, Metric: KVXferTime, LEScale: 1e-3},
			// Bootstrap and allocation wait, and speed, per request (PR #19009).
			{Name: "sglang:kv_transfer_bootstrap_ms", Type: model.MetricTypeHistogram, Metric: KVBootstrapTime, LEScale: 1e-3},
			{Name: "sglang:kv_transfer_alloc_ms", Type: model.MetricTypeHistogram, Metric: KVAllocTime, LEScale: 1e-3},
			{Name: "sglang:kv_transfer_speed_gb_s", Type: model.MetricTypeHistogram, Metric: KVSpeed, LEScale: 1 << 30},
			// Timeout observations per sender or receiver and stage
			// (bootstrap, transfer), not unique failed requests
			// (python/sglang/srt/observability/kv_transfer_metrics.py).
			{Name: "sglang:kv_transfer_timeouts_total", Type: model.MetricTypeCounter, Metric: KVFailTimeout},
			// A histogram of per-request sizes in MiB since SGLang PR #19009.
			{Name: "sglang:kv_transfer_total_mb", Type: model.MetricTypeHistogram, Metric: KVBytes, Sizes: true, Count: KVTransfers, Scale: mebibyte},
			// Before it, a gauge of the same name held the last request's
			// size: no cumulative byte count can be derived from it.
			{Name: "sglang:kv_transfer_total_mb", Type: model.MetricTypeGauge, Note: true,
				Skip: "a gauge in this SGLang version (last request's MB), not a cumulative byte counter: unusable for KV bytes/s"},
		},
	})
}
