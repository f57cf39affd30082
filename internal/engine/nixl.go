package engine

import "github.com/prometheus/common/model"

// KVNIXL is vLLM's NIXL connector. The decode side pulls the KV cache, so
// it counts there; its bytes are a per-transfer size histogram.
const KVNIXL KVSource = "nixl"

func init() {
	RegisterConnector(Connector{
		Source:  KVNIXL,
		Display: "NIXL",
		Engine:  VLLM,
		Order:   20,
		Families: []Family{
			{Name: "vllm:nixl_num_failed_transfers_total", Type: model.MetricTypeCounter, Metric: KVFailNetwork},
			{Name: "vllm:nixl_num_failed_notifications_total", Type: model.MetricTypeCounter, Metric: KVFailNotify},
			{Name: "vllm:nixl_num_kv_expired_reqs_total", Type: model.MetricTypeCounter, Metric: KVExpired},
			{Name: "vllm:nixl_xfer_time_seconds", Type: model.MetricTypeHistogram, Metric: KVXferTime},
			{Name: "vllm:nixl_post_time_seconds", Type: model.MetricTypeHistogram, Metric: KVPostTime},
			{Name: "vllm:nixl_num_descriptors", Type: model.MetricTypeHistogram, Metric: KVDescriptors},
			// _count counts rank-level transfers (pooled over TP workers), not requests.
			{Name: "vllm:nixl_bytes_transferred", Type: model.MetricTypeHistogram, Metric: KVBytes, Sizes: true, Count: KVTransfers},
		},
	})
}
