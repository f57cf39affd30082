package engine

import "github.com/prometheus/common/model"

// VLLMRouter is vLLM's Rust router (https://github.com/vllm-project/router,
// src/metrics.rs). Its counters carry no model label: a target of it names
// its pool with `pool:`.
const VLLMRouter Engine = "vllm-router"

func init() {
	Register(Adapter{
		Engine:   VLLMRouter,
		Display:  "vLLM router",
		Order:    63,
		Prefix:   "vllm_router_",
		Listed:   true,
		Frontend: true,
		Families: []Family{
			// By route, counted when the answer is a success; failures count
			// in the errors instead: arrivals are their sum.
			{Name: "vllm_router_requests_total", Type: model.MetricTypeCounter, Metric: FrontendRequests},
			{Name: "vllm_router_request_errors_total", Type: model.MetricTypeCounter, Metric: Errored},
			// Per worker, added up: the requests in flight through the router.
			{Name: "vllm_router_running_requests", Type: model.MetricTypeGauge, Metric: FrontendInflight},
		},
	})
}
