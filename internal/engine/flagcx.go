package engine

import "github.com/prometheus/common/model"

// KVFlagCX is vLLM's FlagCX connector. It counts on the prefill (sending)
// side (docs/adapters.md).
const KVFlagCX KVSource = "flagcx"

func init() {
	RegisterConnector(Connector{
		Source:  KVFlagCX,
		Display: "FlagCX",
		Engine:  VLLM,
		Order:   10,
		Families: []Family{
			{Name: "vllm:flagcx_total_bytes_transferred_total", Type: model.MetricTypeCounter, Metric: KVBytes},
			{Name: "vllm:flagcx_transfers_total", Type: model.MetricTypeCounter, Metric: KVTransfers},
			{Name: "vllm:flagcx_num_failed_transfers_total", Type: model.MetricTypeCounter, Metric: KVFailNetwork},
			{Name: "vllm:flagcx_num_failed_recvs_total", Type: model.MetricTypeCounter, Metric: KVFailNetwork},
			{Name: "vllm:flagcx_num_kv_expired_reqs_total", Type: model.MetricTypeCounter, Metric: KVExpired},
			{Name: "vllm:flagcx_xfer_time_seconds", Type: model.MetricTypeHistogram, Metric: KVXferTime},
			{Name: "vllm:flagcx_bytes_transferred", Type: model.MetricTypeHistogram,
				Skip: "duplicates vllm:flagcx_total_bytes_transferred_total, which is read instead"},
		},
	})
}
