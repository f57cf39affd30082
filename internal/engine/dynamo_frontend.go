package engine

import "github.com/prometheus/common/model"

// DynamoFrontend is NVIDIA Dynamo's frontend: the HTTP server and KV router
// in front of the prefill and decode workers (https://github.com/ai-dynamo/dynamo,
// names in lib/runtime/src/metrics/prometheus_names.rs, frontend_service).
// It plays no P/D role: its requests are the deployment's arrivals and
// completions as users see them, its queue the requests not yet answered,
// and it estimates, per request, the KV transfer it routes. Its per-worker
// gauges (worker_id, dp_rank) add up over the workers.
const DynamoFrontend Engine = "dynamo-frontend"

func init() {
	Register(Adapter{
		Engine:     DynamoFrontend,
		Display:    "Dynamo frontend",
		Order:      60,
		Prefix:     "dynamo_frontend_",
		Listed:     true,
		ModelLabel: "model",
		Frontend:   true,
		Families: []Family{
			// One series per endpoint, request type, status and error_type;
			// errors of error_type="overload" (503, the frontend's load
			// shedding) are load shed too.
			{Name: "dynamo_frontend_requests_total", Type: model.MetricTypeCounter, ByLabel: "status", ByValue: []Reason{
				{"success", FrontendRequests},
				{"error", Errored},
			}, AlsoLabel: "error_type", AlsoValue: []Reason{{"overload", Shed}}},
			{Name: "dynamo_frontend_queued_requests", Type: model.MetricTypeGauge, Metric: FrontendQueued},
			{Name: "dynamo_frontend_inflight_requests", Type: model.MetricTypeGauge, Metric: FrontendInflight},
			{Name: "dynamo_frontend_time_to_first_token_seconds", Type: model.MetricTypeHistogram, Metric: TTFT},
			{Name: "dynamo_frontend_inter_token_latency_seconds", Type: model.MetricTypeHistogram, Metric: ITL},
			{Name: "dynamo_frontend_request_duration_seconds", Type: model.MetricTypeHistogram, Metric: E2E},
			// The router's upper-bound estimate of each request's KV transfer
			// time (PR #7590), not a measurement; a standalone router exports it
			// as dynamo_component_router_kv_transfer_estimated_latency_seconds.
			{Name: "dynamo_frontend_kv_transfer_estimated_latency_seconds", Type: model.MetricTypeHistogram, Metric: KVXferEstimate},
			{Name: "dynamo_component_router_kv_transfer_estimated_latency_seconds", Type: model.MetricTypeHistogram, Metric: KVXferEstimate},
			// What the router believes each worker holds: prompt tokens
			// still to prefill and KV blocks of running decodes.
			{Name: "dynamo_frontend_worker_active_prefill_tokens", Type: model.MetricTypeGauge, Metric: ActivePrefillTokens},
			{Name: "dynamo_frontend_worker_active_decode_blocks", Type: model.MetricTypeGauge, Metric: ActiveDecodeBlocks},
			// The frontend's pipeline stages (label stage only). preprocess,
			// once per request before dispatch, is the router's own time in
			// the TTFT. route starts once the worker is chosen (the KV
			// router's queue lies before it) and is observed once per leg and
			// per migration: addressing, not routing. transport_roundtrip
			// holds a whole leg, prefill's or decode's, with no label to
			// tell which.
			{Name: "dynamo_frontend_stage_duration_seconds", Type: model.MetricTypeHistogram, ByLabel: "stage", ByValue: []Reason{
				{"preprocess", RouterPreprocessTime},
			}},
			// Requests sent again after their worker was lost, once per
			// attempt: new_request (the stream could not be made) and
			// ongoing_request (it broke mid-request). The request itself is
			// counted once in requests_total.
			{Name: "dynamo_frontend_model_migration_total", Type: model.MetricTypeCounter, Metric: Migrated},
		},
	})
}
