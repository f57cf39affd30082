package ledger

import (
	"reflect"

	"github.com/ptdmon/ptdmon/internal/engine"
)

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

	Arrival  Num   `json:"arrival_per_second"`
	Rejected Num   `json:"rejections_per_second"`
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

// Reasons of router values that no target gives.
const (
	WhyNoRouter    = "no router among the targets (role: router)"
	whyNoDecisions = "the router exports no P/D decision"
)

// NoRouter is the RouterPoint of a pool or deployment without a router.
func NoRouter(pool string) RouterPoint {
	n := Absent(WhyNoRouter)
	return RouterPoint{Pool: pool, Arrival: n, Rejected: n, Queued: n, Inflight: n, TTFT: Quant{n, n, n}, RemotePrefill: n, DecodeOnly: n}
}

// routerSum adds up the routers of one pool or of the deployment.
type routerSum struct {
	instances, up                                         int
	arrival, rejected, queued, inflight, remote, decodeOn sum
	ttft                                                  merged
}

func (s *routerSum) add(in *instanceRead, lat *latency) {
	s.instances++
	if in.why == "" {
		s.up++
	}
	s.arrival.add(in.arrival())
	s.rejected.add(in.optional(engine.Errored, "the router has counted no error yet"))
	s.queued.add(in.gauge(engine.FrontendQueued))
	s.inflight.add(in.gauge(engine.FrontendInflight))
	s.remote.add(in.optional(engine.RouterRemotePrefill, whyNoDecisions))
	s.decodeOn.add(in.optional(engine.RouterDecodeOnly, whyNoDecisions))
	s.ttft.addPart(&lat.ttft, lat.has[0])
}

func (s *routerSum) point(pool string) RouterPoint {
	r := RouterPoint{Pool: pool, Instances: s.instances, Up: s.up}
	r.Arrival = s.arrival.num(WhyNoRouter)
	r.Rejected = s.rejected.num(WhyNoRouter)
	r.Queued, r.Inflight = s.queued.num(WhyNoRouter), s.inflight.num(WhyNoRouter)
	r.TTFT = quant(&s.ttft, "router TTFT")
	r.RemotePrefill, r.DecodeOnly = s.remote.num(whyNoDecisions), s.decodeOn.num(whyNoDecisions)
	return r
}

// arrival is the router's arrival rate over the window: its request
// counter, or, for a router that counts each request once by its outcome
// (Dynamo's status, vLLM's router), its answered requests plus its errors.
func (r *instanceRead) arrival() Num {
	if r.why != "" {
		return Absent(r.why)
	}
	if r.t.has(engine.RouterRequests) {
		return r.windowed(engine.RouterRequests)
	}
	answered := r.windowed(engine.FrontendRequests)
	if !answered.OK() || !r.t.has(engine.Errored) {
		return answered
	}
	if errs := r.windowed(engine.Errored); errs.OK() {
		return Val(answered.V + errs.V)
	}
	return answered
}

// optional is counter m's windowed rate, absent with why where the
// exposition has none of it.
func (r *instanceRead) optional(m engine.Metric, why string) Num {
	if r.why == "" && !r.t.has(m) {
		return Absent(why)
	}
	return r.windowed(m)
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included.
func (r *RouterPoint) UnmarshalJSON(b []byte) error {
	type alias RouterPoint
	return withoutAbsent(b, reflect.ValueOf(r).Elem(), (*alias)(r))
}
