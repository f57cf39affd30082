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
			// The P/D legs as the one component that sees both times them
			// (model_gateway/src/observability/metrics.rs, record_pd_*): the
			// prefill leg's request to its answer read through, and, in
			// sequential P/D over gRPC, the hand-over from the prefill leg's
			// end to the decode leg's send (not the KV copy, which decode's
			// connector pulls after it).
			{Name: "smg_pd_prefill_duration_seconds", Type: model.MetricTypeHistogram, Metric: PrefillLegTime},
			{Name: "smg_pd_kv_transfer_duration_seconds", Type: model.MetricTypeHistogram, Metric: HandoverTime},
			// Prefills that handed decode no KV parameters, so that decode
			// recomputed the prompt: a KV transfer that failed, without a
			// class (unlabelled).
			{Name: "smg_pd_kv_transfer_failures_total", Type: model.MetricTypeCounter, Metric: KVFailures},
			// Requests whose bootstrap fields could not be set (unlabelled).
			{Name: "smg_pd_bootstrap_failures_total", Type: model.MetricTypeCounter, Metric: BootstrapFailed},
			// Retries, once per attempt after the first; in P/D a retry
			// counts once as prefill and once as decode, so the decode
			// series are not read and each resent request counts once.
			{Name: "smg_worker_retries_total", Type: model.MetricTypeCounter, ByLabel: "worker_type", ByValue: []Reason{
				{"regular", Migrated},
				{"prefill", Migrated},
			}},
		},
	})
}
