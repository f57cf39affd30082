package ledger

import "github.com/ptdmon/ptdmon/internal/engine"

// whyNoDecisions is the reason of the P/D decisions of a router that
// exports none.
const whyNoDecisions = "the router exports no P/D decision"

// whyNoShed is the reason of the shed load of a router that counts none.
const whyNoShed = "the router exports no shed-load counter (llm-d's flow control, the SGLang gateway's overload shedding and Dynamo's overload errors do)"

// routerSum adds up the routers of one pool or of the deployment.
type routerSum struct {
	instances, up                                               int
	arrival, rejected, shed, queued, inflight, remote, decodeOn sum
	ttft                                                        merged
}

func (s *routerSum) add(in *instanceRead, lat *latency) {
	s.instances++
	if in.why == "" {
		s.up++
	}
	s.arrival.add(in.arrival())
	s.rejected.add(in.optional(engine.Errored, "the router has counted no error yet"))
	s.shed.add(in.optional(engine.Shed, whyNoShed))
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
	r.Shed = s.shed.num(WhyNoRouter)
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
