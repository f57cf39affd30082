package metrics

// The series /metrics derives from the ledger's points and the verdict,
// which a recording (internal/record) writes under the same names and in
// the same shape, so that the generated dashboards read either.
const (
	NameStageRequests       = "ptd_stage_requests_per_second"
	NameKVBytesPerSecond    = "ptd_kv_transfer_bytes_per_second"
	NameKVRequestBytes      = "ptd_kv_request_bytes"
	NameQueueRequests       = "ptd_queue_requests"
	NameBottleneckStage     = "ptd_bottleneck_stage"
	NamePoolBottleneckStage = "ptd_pool_bottleneck_stage"
	NameStageCapacity       = "ptd_stage_capacity_requests_per_second"
	NameStageUtilisation    = "ptd_stage_utilisation"
)
