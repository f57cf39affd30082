package engine

import "github.com/prometheus/common/model"

// KVMooncake is vLLM-Ascend's Mooncake connector (upstream vLLM's Mooncake
// connector keeps its statistics for logs only).
const KVMooncake KVSource = "mooncake"

func init() {
	RegisterConnector(Connector{
		Source:  KVMooncake,
		Display: "Mooncake",
		Engine:  VLLM,
		Order:   30,
		Families: []Family{
			{Name: "vllm:mooncake_num_failed_transfers_total", Type: model.MetricTypeCounter, Metric: KVFailures},
			{Name: "vllm:mooncake_xfer_time_seconds", Type: model.MetricTypeHistogram, Metric: KVXferTime},
			{Name: "vllm:mooncake_bytes_transferred", Type: model.MetricTypeHistogram, Metric: KVBytes, Sizes: true, Count: KVTransfers},
		},
	})
}
