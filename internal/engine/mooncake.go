package engine

import "github.com/prometheus/common/model"

// KVMooncake is vLLM's Mooncake connector: vLLM-Ascend's, and upstream
// vLLM's once PR #50374 is merged (before it, upstream keeps the
// statistics for logs only).
const KVMooncake KVSource = "mooncake"

func init() {
	RegisterConnector(Connector{
		Source:  KVMooncake,
		Display: "Mooncake",
		Engine:  VLLM,
		Order:   30,
		Families: []Family{
			{Name: "vllm:mooncake_num_failed_transfers_total", Type: model.MetricTypeCounter, Metric: KVFailNetwork},
			// Only in an open pull request (vllm-project/vllm PR #50374,
			// MooncakePromMetrics): failed receives on the decode side and
			// requests whose KV expired before decode read it.
			{Name: "vllm:mooncake_num_failed_recvs_total", Type: model.MetricTypeCounter, Metric: KVFailNetwork},
			{Name: "vllm:mooncake_num_kv_expired_reqs_total", Type: model.MetricTypeCounter, Metric: KVExpired},
			{Name: "vllm:mooncake_num_descriptors", Type: model.MetricTypeHistogram, Metric: KVDescriptors},
			{Name: "vllm:mooncake_xfer_time_seconds", Type: model.MetricTypeHistogram, Metric: KVXferTime},
			{Name: "vllm:mooncake_bytes_transferred", Type: model.MetricTypeHistogram, Metric: KVBytes, Sizes: true, Count: KVTransfers},
		},
	})
}
