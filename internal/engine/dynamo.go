package engine

import "github.com/prometheus/common/model"

// KVDynamo is NVIDIA Dynamo's KV-transfer metrics on TensorRT-LLM workers
// (https://github.com/ai-dynamo/dynamo, in
// components/src/dynamo/trtllm/metrics.py), recorded on the prefill side;
// trtllm-serve itself exports none.
const KVDynamo KVSource = "dynamo"

func init() {
	RegisterConnector(Connector{
		Source:  KVDynamo,
		Display: "Dynamo",
		Engine:  TensorRTLLM,
		Order:   50,
		Families: []Family{
			// A count of transfers where the byte histogram is missing.
			{Name: "trtllm_kv_transfer_success_total", Type: model.MetricTypeCounter, Metric: KVTransfers, Deprecated: true},
			{Name: "trtllm_kv_transfer_failure_total", Type: model.MetricTypeCounter, Metric: KVFailures},
			{Name: "trtllm_kv_transfer_latency_seconds", Type: model.MetricTypeHistogram, Metric: KVXferTime},
			// The per-request KV size histogram (from TensorRT-LLM's
			// timing_metrics.kv_cache_size): its _sum is a bytes counter.
			// Dynamo always writes the prefix.
			{Name: "trtllm_kv_transfer_bytes", Type: model.MetricTypeHistogram, Metric: KVBytes, Sizes: true, Count: KVTransfers, PrefixOnly: true},
		},
	})
}
