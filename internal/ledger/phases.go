package ledger

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// phaseSource is one histogram a phase is read from, on instances of one
// role ("" either).
type phaseSource struct {
	m    engine.Metric
	role engine.Role
}

// phaseSources are each phase's histograms in order of precedence: an
// instance counts under the first it exports. Each is the mean of the
// histogram's observations, so phases add as means do. The router phase
// is not among them: it adds several histograms' means (routerParts).
var phaseSources = [numPhases][]phaseSource{
	// Router: routerParts.
	nil,
	// Queue: waiting for prefill. SGLang's per-stage prefill_waiting,
	// else vLLM's, SGLang's and TensorRT-LLM's queue time on prefill.
	{{engine.StageWaiting, engine.Prefill}, {engine.QueueTime, engine.Prefill}},
	// Prefill compute: SGLang's prefill_forward; vLLM's and TensorRT-LLM's
	// prefill time on prefill.
	{{engine.StageForward, engine.Prefill}, {engine.PrefillTime, engine.Prefill}},
	// Bootstrap and allocation: SGLang's per-stage bootstrap (prefill's,
	// else decode's), else its KV bootstrap time.
	{{engine.StageBootstrap, engine.Prefill}, {engine.StageBootstrap, engine.Decode}, {engine.KVBootstrapTime, ""}},
	// Hand-over: the router's time between the legs (the SGLang gateway's
	// sequential P/D).
	{{engine.HandoverTime, engine.Router}},
	// KV transfer: SGLang's per-stage transfer, else the connector's copy
	// time (vLLM's NIXL and FlagCX, Dynamo).
	{{engine.StageKVTransfer, engine.Prefill}, {engine.StageKVTransfer, engine.Decode}, {engine.KVXferTime, ""}},
	// First decode step: one decode step, the decode instances' mean
	// inter-token latency; no engine times the first step alone.
	{{engine.ITL, engine.Decode}},
}

// numPhases is the number of phases, PhaseNames' length.
const numPhases = 7

// The phases' indexes in phaseSources that are read otherwise.
const (
	phaseRouter    = 0
	phaseBootstrap = 3
)

// routerParts are the routers' histograms of their own time before an
// engine has the request; a request passes through each, so the router
// phase is the sum of their means: llm-d's flow-control queue, Dynamo's
// preprocess stage.
var routerParts = [...]engine.Metric{engine.RouterQueueTime, engine.RouterPreprocessTime}

// whyNoPhase are the reasons of a phase no instance of the pool exports.
var whyNoPhase = [numPhases]string{
	"no router of the pool times its own part (llm-d's flow-control queue duration, Dynamo's preprocess stage)",
	"no instance of the pool exports a queue time (vLLM's and TensorRT-LLM's request_queue_time_seconds, SGLang's queue_time_seconds or per-stage prefill_waiting)",
	"no instance of the pool exports a prefill time (vLLM's and TensorRT-LLM's request_prefill_time_seconds, SGLang's per-stage prefill_forward)",
	"no instance of the pool exports bootstrap or allocation times (SGLang's per-stage bootstrap stages or kv_bootstrap_time)",
	"no router of the pool times the hand-over between the legs (the SGLang gateway's pd_kv_transfer_duration_seconds, sequential P/D over gRPC)",
	"no instance of the pool exports KV transfer times (vLLM's NIXL and FlagCX xfer_time, Dynamo's, SGLang's per-stage transfer stages)",
	"no decode instance of the pool exports inter-token latency, the decode step",
}

// whyNoPrefillLeg is the prefill leg's reason where no router times it.
const whyNoPrefillLeg = "no router of the pool times the prefill leg (the SGLang gateway's pd_prefill_duration_seconds)"

// phaseAcc sums one phase's window increases over the pool's instances.
type phaseAcc struct {
	sum, count float64
	exported   bool
}

type phaseSum struct {
	phases [numPhases]phaseAcc
	// routerParts: routerParts' histograms, added up over the routers;
	// prefillLeg: the routers' timing of the prefill leg.
	routerParts [len(routerParts)]phaseAcc
	prefillLeg  phaseAcc
	// The TTFT of the prefill leg, the decode leg, decode instances that
	// time from the arrival, and the routers.
	ttftP, ttftD, ttftA, ttftR phaseAcc
	// allocWait: decode's KV allocation wait, where its bootstrap stage is
	// split in two (SGLang's decode_bootstrap_handshake and
	// decode_kv_allocation_wait): added to the bootstrap phase where that
	// phase comes from decode.
	allocWait phaseAcc
	bootFromD bool
}

// add adds one up instance's window increases, each phase from the first
// source it exports.
func (s *phaseSum) add(in *instanceRead) {
	if in.why != "" {
		return
	}
	for i, sources := range phaseSources {
		for _, src := range sources {
			if src.role != "" && src.role != in.role || !in.t.exports(src.m) {
				continue
			}
			in.meanPart(src.m, &s.phases[i])
			if i == phaseBootstrap && src.m == engine.StageBootstrap && src.role == engine.Decode {
				s.bootFromD = true
			}
			break
		}
	}
	if in.role == engine.Decode && in.t.exports(engine.StageAllocWait) {
		in.meanPart(engine.StageAllocWait, &s.allocWait)
	}
	if in.role == engine.Router {
		for i, m := range routerParts {
			if in.t.exports(m) {
				in.meanPart(m, &s.routerParts[i])
			}
		}
		if in.t.exports(engine.PrefillLegTime) {
			in.meanPart(engine.PrefillLegTime, &s.prefillLeg)
		}
	}
	var ttft *phaseAcc
	switch {
	case in.role == engine.Prefill:
		ttft = &s.ttftP
	case in.role == engine.Decode && in.engine.DecodeFromArrival():
		ttft = &s.ttftA
	case in.role == engine.Decode:
		ttft = &s.ttftD
	case in.role == engine.Router:
		ttft = &s.ttftR
	}
	if ttft != nil && in.t.exports(engine.TTFT) {
		in.meanPart(engine.TTFT, ttft)
	}
}

// exports says whether t's newest sample has histogram m.
func (t *target) exports(m engine.Metric) bool {
	return t.n > 0 && t.at(0).hists[m.HistogramIndex()].present
}

// meanPart adds the instance's increase of histogram m over the window.
func (r *instanceRead) meanPart(m engine.Metric, acc *phaseAcc) {
	acc.exported = true
	if p, ok := r.t.histWindow(m.HistogramIndex(), r.now, r.window); ok {
		acc.sum += p.sum
		acc.count += p.count
	}
}

func (a *phaseAcc) mean(none string) Num {
	switch {
	case !a.exported:
		return Absent(none)
	case a.count <= 0:
		return Absent("no observations in the window")
	}
	return Val(a.sum / a.count)
}

func (s *phaseSum) point() Phases {
	var p Phases
	for i := range s.phases {
		*p.Phase(i) = s.phases[i].mean(whyNoPhase[i])
	}
	p.Router = s.router()
	p.PrefillLeg = s.prefillLeg.mean(whyNoPrefillLeg)
	// Decode's bootstrap split in two: the handshake's mean plus the
	// allocation wait's (each request is observed in both, so their
	// observations are not pooled); the wait alone where no handshake was
	// timed.
	if w := s.allocWait.mean(""); w.OK() && (s.bootFromD || !s.phases[phaseBootstrap].exported) {
		b := &p.Bootstrap
		if b.OK() {
			*b = Val(b.V + w.V)
		} else {
			*b = w
		}
	}
	p.TTFT, p.TTFTSource = s.ttft(p.Router, p.Handover)
	p.Untimed = untimed(&p)
	return p
}

// The sources of the pool's TTFT, as slo.Source* names them.
const (
	ttftRouter  = "router"
	ttftArrival = "decode from arrival"
	ttftLegs    = "prefill leg + decode leg"
	// ttftLegsHandover: the legs with the router's hand-over between them.
	ttftLegsHandover = "prefill leg + hand-over + decode leg"
	// ttftRouterPhase prefixes an engines' TTFT that the router phase
	// was added to.
	ttftRouterPhase = "router phase + "
)

// ttft is the whole request's mean TTFT and what timed it: the routers',
// else decode's where it times from the arrival, else the two legs' means
// added, with the router's hand-over between them where it times one; the
// engines' timings then start when an engine has the request, so the
// router phase, where a router times it, is added to them.
func (s *phaseSum) ttft(router, handover Num) (Num, string) {
	if s.ttftR.exported {
		return s.ttftR.mean(""), ttftRouter
	}
	v, src := s.engineTTFT()
	if src == ttftLegs && v.OK() && handover.OK() {
		v, src = Val(v.V+handover.V), ttftLegsHandover
	}
	if !v.OK() || !router.OK() {
		return v, src
	}
	return Val(router.V + v.V), ttftRouterPhase + src
}

// engineTTFT is the TTFT the engines time: decode's where it times from
// the arrival, else the two legs' means added.
func (s *phaseSum) engineTTFT() (Num, string) {
	if s.ttftA.exported {
		return s.ttftA.mean(""), ttftArrival
	}
	p := s.ttftP.mean("no prefill instance of the pool exports the TTFT histogram of the prefill leg")
	d := s.ttftD.mean("no decode instance of the pool exports a TTFT histogram")
	switch {
	case !d.OK():
		return d, ""
	case !p.OK():
		return Absent("the decode instances time the decode leg only: " + p.Why), ""
	}
	return Val(p.V + d.V), ttftLegs
}

// router is the router phase: the sum of the means of routerParts that
// the pool's routers export, each request passing through every one.
func (s *phaseSum) router() Num {
	sum, any := 0.0, false
	for i := range s.routerParts {
		a := &s.routerParts[i]
		if !a.exported {
			continue
		}
		m := a.mean("")
		if !m.OK() {
			return Absent("no observations in the window")
		}
		sum, any = sum+m.V, true
	}
	if !any {
		return Absent(whyNoPhase[phaseRouter])
	}
	return Val(sum)
}

// untimed is the TTFT less its phases that are there.
func untimed(p *Phases) Num {
	if !p.TTFT.OK() {
		return Absent("no TTFT of the whole request: " + p.TTFT.Why)
	}
	sum := 0.0
	for i := range PhaseNames {
		if v := p.Phase(i); v.OK() {
			sum += v.V
		}
	}
	if d := p.TTFT.V - sum; d >= 0 || sum == 0 {
		return Val(max(d, 0))
	} else if -d < 0.001 {
		return Val(0)
	}
	return Absent(fmt.Sprintf("the phases add up to %.3g s more than the TTFT: they overlap, or are of other requests than the TTFT's", sum-p.TTFT.V))
}

// firstExported is the first of ms that t's newest sample has, else the
// last: an instance counts a phase under one source only.
func firstExported(t *target, ms ...engine.Metric) engine.Metric {
	for _, m := range ms {
		if t.exports(m) {
			return m
		}
	}
	return ms[len(ms)-1]
}
