package engine

import "github.com/prometheus/common/model"

// SGLangGateway is SGLang's router, the SGLang Model Gateway (smg, formerly
// sgl-router; https://github.com/lightseekorg/smg,
// model_gateway/src/observability/metrics.rs and
// model_gateway/src/middleware/scheduler/metrics.rs).
const SGLangGateway Engine = "sglang-gateway"

func init() {
	Register(Adapter{
		Engine:     SGLangGateway,
		Aliases:    []string{"smg", "sgl-router"},
		Display:    "SGLang Model Gateway",
		Order:      62,
		Prefix:     "smg_",
		Listed:     true,
		ModelLabel: "model",
		Frontend:   true,
		Families: []Family{
			// Routed requests, by router_type, backend_type ("pd" for
			// prefill/decode), model, endpoint and streaming.
			{Name: "smg_router_requests_total", Type: model.MetricTypeCounter, Metric: RouterRequests},
			{Name: "smg_router_request_errors_total", Type: model.MetricTypeCounter, Metric: Errored},
			// TTFT as users see it, from prefill start to the first decode
			// token (record_pd_ttft); smg_router_ttft_seconds is, in P/D, the
			// decode leg alone.
			{Name: "smg_pd_ttft_seconds", Type: model.MetricTypeHistogram, Metric: TTFT},
			{Name: "smg_router_ttft_seconds", Type: model.MetricTypeHistogram, Skip: "in prefill/decode, the decode leg only; smg_pd_ttft_seconds is the TTFT users see"},
			// The priority scheduler's waiters and admitted requests, per class.
			{Name: "smg_scheduler_queue_depth", Type: model.MetricTypeGauge, Metric: FrontendQueued},
			{Name: "smg_scheduler_inflight", Type: model.MetricTypeGauge, Metric: FrontendInflight},
			// Requests shed with 503 because every worker of the model was
			// overloaded, by stage (selection, dispatch, and pd_admission:
			// no decode room freed in time).
			{Name: "smg_worker_overload_shed_total", Type: model.MetricTypeCounter, Metric: Shed},
		},
	})
}
