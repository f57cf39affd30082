package ledger

import "github.com/ptdmon/ptdmon/internal/engine"

// phaseSource is one histogram a phase is read from, on instances of one
// role ("" either).
type phaseSource struct {
	m    engine.Metric
	role engine.Role
}

// phaseSources are each phase's histograms in order of precedence: an
// instance counts under the first it exports. Each is the mean of the
// histogram's observations, so phases add as means do.
var phaseSources = [5][]phaseSource{
	// Queue: waiting for prefill. SGLang's per-stage prefill_waiting,
	// else vLLM's, SGLang's and TensorRT-LLM's queue time on prefill.
	{{engine.StageWaiting, engine.Prefill}, {engine.QueueTime, engine.Prefill}},
	// Prefill compute: SGLang's prefill_forward; vLLM's and TensorRT-LLM's
	// prefill time on prefill.
	{{engine.StageForward, engine.Prefill}, {engine.PrefillTime, engine.Prefill}},
	// Bootstrap and allocation: SGLang's per-stage bootstrap (prefill's,
	// else decode's), else its KV bootstrap time.
	{{engine.StageBootstrap, engine.Prefill}, {engine.StageBootstrap, engine.Decode}, {engine.KVBootstrapTime, ""}},
	// KV transfer: SGLang's per-stage transfer, else the connector's copy
	// time (vLLM's NIXL and FlagCX, Dynamo).
	{{engine.StageKVTransfer, engine.Prefill}, {engine.StageKVTransfer, engine.Decode}, {engine.KVXferTime, ""}},
	// First decode step: one decode step, the decode instances' mean
	// inter-token latency; no engine times the first step alone.
	{{engine.ITL, engine.Decode}},
}

// phaseBootstrap is the bootstrap phase's index in phaseSources.
const phaseBootstrap = 2

// whyNoPhase are the reasons of a phase no instance of the pool exports.
var whyNoPhase = [5]string{
	"no instance of the pool exports a queue time (vLLM's and TensorRT-LLM's request_queue_time_seconds, SGLang's queue_time_seconds or per-stage prefill_waiting)",
	"no instance of the pool exports a prefill time (vLLM's and TensorRT-LLM's request_prefill_time_seconds, SGLang's per-stage prefill_forward)",
	"no instance of the pool exports bootstrap or allocation times (SGLang's per-stage bootstrap stages or kv_bootstrap_time)",
	"no instance of the pool exports KV transfer times (vLLM's NIXL and FlagCX xfer_time, Dynamo's, SGLang's per-stage transfer stages)",
	"no decode instance of the pool exports inter-token latency, the decode step",
}

// phaseAcc sums one phase's window increases over the pool's instances.
type phaseAcc struct {
	sum, count float64
	exported   bool
}

type phaseSum struct {
	phases       [5]phaseAcc
	ttftP, ttftD phaseAcc
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
	ttft := &s.ttftP
	if in.role == engine.Decode {
		ttft = &s.ttftD
	}
	if in.t.exports(engine.TTFT) {
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
	ttft := &s.ttftD
	if !ttft.exported {
		ttft = &s.ttftP
	}
	p.TTFT = ttft.mean("no instance of the pool exports a TTFT histogram")
	return p
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
