package engine

import "github.com/prometheus/common/model"

// NIXLTelemetry is NIXL's own Prometheus telemetry exporter
// (https://github.com/ai-dynamo/nixl, src/plugins/telemetry/prometheus),
// enabled in any process that runs a NIXL agent (NIXL_TELEMETRY_ENABLE=y,
// NIXL_TELEMETRY_EXPORTER=prometheus) whatever the engine: SGLang, Dynamo
// and TensorRT-LLM over NIXL included. It listens on a port of its own
// (NIXL_TELEMETRY_PROMETHEUS_PORT), so it is a target of its own, configured
// with the role of the engine instance it serves.
const NIXLTelemetry Engine = "nixl-telemetry"

// KVNIXLTelemetry is the KV source of NIXL's telemetry exporter. A NIXL
// transfer is posted by one agent, the initiator, and only the initiator
// counts it: as sent bytes when it writes (the prefill side pushing) and as
// received bytes when it reads (the decode side pulling, as vLLM's NIXL
// connector does), so adding tx and rx over every agent counts each
// transfer once.
const KVNIXLTelemetry KVSource = "nixl-telemetry"

// The names as of ai-dynamo/nixl src/core/telemetry/telemetry_event.h
// @8770b65 (telemetryMetricDescriptor, telemetryErrorStatusLabel). Labels:
// hostname and agent_name (one agent per engine worker process: they add
// up). The multi-process exporter (prometheus_mp, NIXL PR #1920) serves
// every process of a multi-rank run from one port, the same names with pid,
// agent_instance and local_rank: each rank posts its own transfers, so
// they add up too.
func init() {
	Register(Adapter{
		Engine:      NIXLTelemetry,
		Display:     "NIXL telemetry",
		Order:       40,
		Prefix:      "agent_",
		Listed:      true,
		GroupLabels: []string{"hostname", "agent_name", "pid", "agent_instance", "local_rank"},
		// TransferLibrary: under vLLM's NIXL connector, the connector's
		// byte histogram and the agent's rx bytes count the same pulls.
		TransferLibrary: true,
	})
	RegisterConnector(Connector{
		Source:  KVNIXLTelemetry,
		Display: "NIXL telemetry",
		Engine:  NIXLTelemetry,
		Order:   60,
		Families: []Family{
			{Name: "agent_tx_bytes_total", Type: model.MetricTypeCounter, Metric: KVBytes},
			{Name: "agent_rx_bytes_total", Type: model.MetricTypeCounter, Metric: KVBytes},
			{Name: "agent_tx_requests_num_total", Type: model.MetricTypeCounter, Metric: KVTransfers},
			{Name: "agent_rx_requests_num_total", Type: model.MetricTypeCounter, Metric: KVTransfers},
			// Microseconds; the default buckets run from 10 µs to 10 s.
			{Name: "agent_xfer_time_us", Type: model.MetricTypeHistogram, Metric: KVXferTime, LEScale: 1e-6},
			{Name: "agent_xfer_post_time_us", Type: model.MetricTypeHistogram, Metric: KVPostTime, LEScale: 1e-6},
			// One series per status (nixl_status_t): the transport's own
			// failures are network failures; the others are misuse or
			// unknown, unclassified.
			{Name: "agent_errors_total", Type: model.MetricTypeCounter, ByLabel: "status", ByValue: []Reason{
				{"remote_disconnect", KVFailNetwork},
				{"backend", KVFailNetwork},
				{"not_posted", KVFailures},
				{"invalid_param", KVFailures},
				{"not_found", KVFailures},
				{"mismatch", KVFailures},
				{"not_allowed", KVFailures},
				{"repost_active", KVFailures},
				{"unknown", KVFailures},
				{"not_supported", KVFailures},
				{"canceled", KVFailures},
			}},
			{Name: "agent_tx_last_bytes", Type: model.MetricTypeGauge, Skip: "the last request's size; agent_tx_bytes_total is read instead"},
			{Name: "agent_rx_last_bytes", Type: model.MetricTypeGauge, Skip: "the last request's size; agent_rx_bytes_total is read instead"},
			{Name: "agent_xfer_time_total", Type: model.MetricTypeCounter, Skip: "the histogram agent_xfer_time_us is read instead"},
			{Name: "agent_xfer_post_time_total", Type: model.MetricTypeCounter, Skip: "the histogram agent_xfer_post_time_us is read instead"},
			{Name: "agent_xfer_time", Type: model.MetricTypeGauge, Skip: "the last request's time; the histogram agent_xfer_time_us is read instead"},
			{Name: "agent_xfer_post_time", Type: model.MetricTypeGauge, Skip: "the last request's time; the histogram agent_xfer_post_time_us is read instead"},
			{Name: "agent_memory_registered_total", Type: model.MetricTypeCounter, Skip: "memory registration, not KV transfer"},
			{Name: "agent_memory_deregistered_total", Type: model.MetricTypeCounter, Skip: "memory registration, not KV transfer"},
			{Name: "agent_memory_registered_last_bytes", Type: model.MetricTypeGauge, Skip: "memory registration, not KV transfer"},
			{Name: "agent_memory_deregistered_last_bytes", Type: model.MetricTypeGauge, Skip: "memory registration, not KV transfer"},
			{Name: "agent_telemetry_events_dropped_total", Type: model.MetricTypeCounter,
				Skip: "telemetry events dropped: the byte and error counters undercount while it grows"},
		},
	})
}
