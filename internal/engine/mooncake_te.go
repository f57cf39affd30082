package engine

import "github.com/prometheus/common/model"

// MooncakeTE is the Mooncake transfer engine's own metrics endpoint, used
// by SGLang's and vLLM's Mooncake back ends whatever the engine. Its names
// exist only in an open pull request (kvcache-ai/Mooncake PR #2958, "Add
// standard Prometheus metrics to Classic TE", as of 2026-07-25): no prefix,
// no labels. The endpoint is a target of its own, configured with the role
// of the engine instance it serves.
const MooncakeTE Engine = "mooncake-te"

// KVMooncakeTE is the KV source of the Mooncake transfer engine. The
// engine that submits a batch transfer counts it (the prefill side, which
// writes the KV into the decode side's buffers), so adding over every
// endpoint counts each transfer once.
const KVMooncakeTE KVSource = "mooncake-te"

func init() {
	Register(Adapter{
		Engine:  MooncakeTE,
		Display: "Mooncake transfer engine",
		Order:   50,
		Prefix:  "transfer_",
		Listed:  true,
		// TransferLibrary: under vLLM's Mooncake connector, the connector
		// and the transfer engine count the same bytes.
		TransferLibrary: true,
	})
	RegisterConnector(Connector{
		Source:  KVMooncakeTE,
		Display: "Mooncake transfer engine",
		Engine:  MooncakeTE,
		Order:   70,
		Families: []Family{
			{Name: "transfer_bytes_total", Type: model.MetricTypeCounter, Metric: KVBytes},
			{Name: "transfer_requests_total", Type: model.MetricTypeCounter, Metric: KVTransfers},
			{Name: "transfer_failures_total", Type: model.MetricTypeCounter, Metric: KVFailNetwork},
			{Name: "inflight_transfers", Type: model.MetricTypeGauge, Metric: KVInflight},
			{Name: "transfer_latency_seconds", Type: model.MetricTypeHistogram, Metric: KVXferTime},
			{Name: "transfer_size_bytes", Type: model.MetricTypeHistogram, Skip: "per-request sizes; transfer_bytes_total is read instead"},
		},
	})
}
