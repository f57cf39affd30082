package reqtrace

import "fmt"

// ID is a request id exactly as written in the record (decimal text for
// numeric ids). Ids are 64-bit snowflakes that exceed 2^53, so they are never
// converted to float64; keeping the text keeps them exact. "" means unknown.
type ID string

// Kind tells which process wrote a record.
type Kind uint8

const (
	// KindDisagg is a combined record of the disaggregated front server,
	// with a ctx and/or a gen phase.
	KindDisagg Kind = iota
	// KindWorker is a worker's own record (aggregated serving, or one side
	// of a disaggregated request); all its times share one clock.
	KindWorker
)

func (k Kind) String() string {
	if k == KindWorker {
		return "worker"
	}
	return "disagg"
}

// Generation is the format generation of a record (docs/trtllm.md#generations).
type Generation string

const (
	GenA  Generation = "A"   // pull shape of GET /perf_metrics, no "status"
	GenB  Generation = "B"   // JSONL; header-derived phases carry 4 times
	GenC  Generation = "C"   // JSONL; phases also carry server and KV times
	GenBC Generation = "B/C" // worker JSONL line: B and C look the same
)

// Timing holds the absolute timestamps of one phase in seconds of a steady
// clock. 0 means unknown: TensorRT-LLM maps ≤ 0 to "not recorded", and a
// missing key or null decode to 0 too.
type Timing struct {
	ServerArrival    float64 `json:"server_arrival_time"`
	Arrival          float64 `json:"arrival_time"`
	FirstScheduled   float64 `json:"first_scheduled_time"`
	FirstToken       float64 `json:"first_token_time"`
	ServerFirstToken float64 `json:"server_first_token_time"`
	LastToken        float64 `json:"last_token_time"`
	KVStart          float64 `json:"kv_cache_transfer_start"`
	KVEnd            float64 `json:"kv_cache_transfer_end"`
}

// Phase is one worker's part of a request.
type Phase struct {
	Present bool
	// Server is the routed server as host:port (scheme stripped), the key
	// under which its clock offset is looked up. Empty for worker records.
	Server string
	Timing Timing
}

// Pos locates a record in its input.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// Record is one parsed request record, normalised across generations.
type Record struct {
	Pos  Pos
	Kind Kind
	Gen  Generation
	ID   ID
	// Disagg-server times (disagg clock, the reference); 0 = unknown.
	DisaggArrival    float64
	DisaggDispatch   float64
	DisaggFirstToken float64
	// Ctx and GenPhase are the phases of a disagg record. A worker record
	// keeps its single phase in Worker.
	Ctx      Phase
	GenPhase Phase
	Worker   Phase
}
