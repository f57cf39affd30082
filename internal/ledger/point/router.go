package point

import "reflect"

// RouterPoint is what the routers in front of a pool, or of the whole
// deployment, say at one tick (docs/pools.md#routers): the arrival rate as
// the router counts it, the requests it answered with an error, its queue
// and in-flight requests, the TTFT its clients see and, where it exports
// them, its P/D decisions. Every rate is over the window W.
type RouterPoint struct {
	// Pool is the pool the routers serve; "" for the deployment's.
	Pool      string `json:"pool,omitempty"`
	Instances int    `json:"instances"`
	Up        int    `json:"instances_up"`

	Arrival  Num `json:"arrival_per_second"`
	Rejected Num `json:"rejections_per_second"`
	// Shed: requests the routers turned away for capacity (flow control's
	// rejections and evictions, overload shedding), a part of Rejected
	// where a router counts both.
	Shed     Num   `json:"shed_per_second"`
	Queued   Num   `json:"queued"`
	Inflight Num   `json:"inflight"`
	TTFT     Quant `json:"ttft_seconds"`
	// RemotePrefill and DecodeOnly: requests the router sent to a
	// prefill instance first, and straight to decode.
	RemotePrefill Num `json:"remote_prefill_per_second"`
	DecodeOnly    Num `json:"decode_only_per_second"`
}

// MarshalJSON adds the reasons of absent values.
func (r RouterPoint) MarshalJSON() ([]byte, error) {
	type alias RouterPoint
	return withAbsent(r, alias(r))
}

// WhyNoRouter is the reason of router values that no target gives.
const WhyNoRouter = "no router among the targets (role: router)"

// NoRouter is the RouterPoint of a pool or deployment without a router.
func NoRouter(pool string) RouterPoint {
	n := Absent(WhyNoRouter)
	return RouterPoint{Pool: pool, Arrival: n, Rejected: n, Shed: n, Queued: n, Inflight: n, TTFT: Quant{n, n, n}, RemotePrefill: n, DecodeOnly: n}
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included.
func (r *RouterPoint) UnmarshalJSON(b []byte) error {
	type alias RouterPoint
	return withoutAbsent(b, reflect.ValueOf(r).Elem(), (*alias)(r))
}
