package sim

// Bucket boundaries copied from the engines' collectors (vLLM
// v1/metrics/loggers.py, kv_connector nixl/stats.py and FlagCX
// flagcx_stats.py; SGLang observability/metrics_collector.py), because
// `le` values are part of the wire format a collector sees.
var (
	vllmTTFTBuckets = newTable(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
		0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
	vllmITLBuckets = newTable(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)
	vllmRequestLatencyBuckets = newTable(0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0,
		20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0)
	// build_1_2_5_buckets(max_model_len=131072).
	vllmTokenBuckets = newTable(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
		20000, 50000, 100000)
	vllmXferTimeBuckets  = newTable(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0)
	vllmPostTimeBuckets  = newTable(0.001, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 5.0)
	vllmXferBytesBuckets = func() *bucketTable { // 2**(10+i) for i in range(1, 25, 2): 2 KiB .. 8 GiB
		var b []float64
		for i := 1; i < 25; i += 2 {
			b = append(b, float64(int64(1)<<(10+i)))
		}
		return newTable(b...)
	}()
	vllmDescriptorBuckets = newTable(10, 20, 30, 50, 75, 100, 200, 400, 1000, 2000, 4000, 10000, 20000, 50000)

	sglangTTFTBuckets = newTable(0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)
	sglangE2EBuckets  = newTable(0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 800)
	sglangITLBuckets  = newTable(0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035,
		0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)
	sglangKVMBBuckets      = newTable(1, 5, 10, 50, 100, 500, 1000, 5000, 10000)
	sglangKVLatencyBuckets = newTable(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000)
	sglangKVSpeedBuckets   = newTable(0.1, 0.5, 1, 5, 10, 25, 50, 100, 200, 400)
)

// bucketTable is a histogram's bounds plus their printed `le` values,
// computed once because every scrape prints them.
type bucketTable struct {
	bounds []float64
	le     []string // len(bounds)+1, last "+Inf"
}

func newTable(bounds ...float64) *bucketTable {
	t := &bucketTable{bounds: bounds, le: make([]string, len(bounds)+1)}
	for i, b := range bounds {
		t.le[i] = pyFloat(b)
	}
	t.le[len(bounds)] = "+Inf"
	return t
}
