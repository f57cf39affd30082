package engine

import "github.com/prometheus/common/model"

// LLMDEPP is llm-d's endpoint picker (EPP), the router of an llm-d
// inference pool (https://github.com/llm-d/llm-d-router: its metrics
// catalogue and pkg/epp/metrics/llm_d_router_metrics.go). Its names moved to the
// llm_d_epp_ prefix (llm-d-router PR #1661); the older inference_objective_
// and llm_d_inference_scheduler_ twins are read where the new ones are
// absent.
const LLMDEPP Engine = "llm-d-epp"

func init() {
	// The P/D decision (disagg_decision_total{decision_type}): prefill on a
	// prefill instance first, or decode alone. encode-decode prefills on the
	// decode instance too.
	decisions := []Reason{
		{"prefill-decode", RouterRemotePrefill},
		{"encode-prefill-decode", RouterRemotePrefill},
		{"decode-only", RouterDecodeOnly},
		{"encode-decode", RouterDecodeOnly},
	}
	Register(Adapter{
		Engine:     LLMDEPP,
		Display:    "llm-d EPP",
		Order:      61,
		Prefix:     "llm_d_epp_",
		Listed:     true,
		ModelLabel: "model_name",
		Frontend:   true,
		Families: []Family{
			{Name: "llm_d_epp_request_total", Type: model.MetricTypeCounter, Metric: RouterRequests},
			{Name: "llm_d_epp_request_error_total", Type: model.MetricTypeCounter, Metric: Errored},
			{Name: "llm_d_epp_request_running", Type: model.MetricTypeGauge, Metric: FrontendInflight},
			// Held by flow control (only with its feature gate).
			{Name: "llm_d_epp_flow_control_queue_size", Type: model.MetricTypeGauge, Metric: FrontendQueued},
			{Name: "llm_d_epp_request_ttft_seconds", Type: model.MetricTypeHistogram, Metric: TTFT},
			// Flow control's final outcome per request (its QueueOutcome
			// names): rejected for capacity, or evicted from the queue by its
			// TTL or by a request of higher priority, is load shed before any
			// engine saw it. Dispatched requests are served; RejectedOther
			// (an internal error) and EvictedContextCancelled (the client
			// left) are not shed.
			{Name: "llm_d_epp_flow_control_requests_total", Type: model.MetricTypeCounter, ByLabel: "outcome", ByValue: []Reason{
				{"RejectedCapacity", Shed},
				{"EvictedTTL", Shed},
				{"EvictedDisplaced", Shed},
			}},
			{Name: "llm_d_epp_disagg_decision_total", Type: model.MetricTypeCounter, ByLabel: "decision_type", ByValue: decisions},
			// Flow control's time from enqueue to each request's outcome:
			// of the dispatched, the router's queue wait in their TTFT; the
			// rejected and evicted never reach an engine.
			{Name: "llm_d_epp_flow_control_request_queue_duration_seconds", Type: model.MetricTypeHistogram, ByLabel: "outcome", ByValue: []Reason{
				{"Dispatched", RouterQueueTime},
			}},
			// Before the rename (llm-d-router pkg/epp/metrics/metrics.go,
			// pkg/epp/framework/plugins/scheduling/profilehandler/disagg/metrics.go).
			{Name: "inference_objective_request_total", Type: model.MetricTypeCounter, Metric: RouterRequests, Deprecated: true},
			{Name: "inference_objective_request_error_total", Type: model.MetricTypeCounter, Metric: Errored, Deprecated: true},
			{Name: "inference_objective_running_requests", Type: model.MetricTypeGauge, Metric: FrontendInflight, Deprecated: true},
			{Name: "llm_d_inference_scheduler_disagg_decision_total", Type: model.MetricTypeCounter, ByLabel: "decision_type", ByValue: decisions, Deprecated: true},
		},
	})
}
