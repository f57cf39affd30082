package engine

import "github.com/prometheus/common/model"

// KVNIXL is vLLM's NIXL connector. The side that posts the transfer counts
// it: decode in the default pull (READ) mode, prefill in push (WRITE) mode
// (PR #57722, push_connector.py: decode only registers and waits). Its
// bytes are a per-transfer size histogram, per TP rank.
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
			// Push mode (PR #57722, open): a decode registration whose
			// deadline passed with no push (decode waited for KV that did not
			// come: a timeout), and the prefill writer thread's exceptions.
			{Name: "vllm:nixl_num_registration_expired_total", Type: model.MetricTypeCounter, Metric: KVFailTimeout},
			{Name: "vllm:nixl_num_writer_loop_errors_total", Type: model.MetricTypeCounter, Metric: KVFailures},
			{Name: "vllm:nixl_xfer_time_seconds", Type: model.MetricTypeHistogram, Metric: KVXferTime},
			{Name: "vllm:nixl_post_time_seconds", Type: model.MetricTypeHistogram, Metric: KVPostTime},
			{Name: "vllm:nixl_num_descriptors", Type: model.MetricTypeHistogram, Metric: KVDescriptors},
			// _count counts rank-level transfers (pooled over TP workers), not requests.
			{Name: "vllm:nixl_bytes_transferred", Type: model.MetricTypeHistogram, Metric: KVBytes, Sizes: true, Count: KVTransfers},
		},
	})
}
