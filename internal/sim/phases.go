package sim

import (
	"slices"
	"time"
)

// PhaseTruth is where a group's requests spent their time to first token,
// summed over the requests that completed, from the model's own timestamps
// rather than any exposition: the truth the ledger's TTFT phases are
// checked against (docs/sim.md#ttft-phases).
type PhaseTruth struct {
	Requests uint64
	// Seconds summed over the requests: waiting for prefill, prefill
	// compute, the KV copy (loads that failed excluded: no copy is timed)
	// and the first decode step (admission to first token).
	Queue, Prefill, Transfer, FirstDecode float64
	Transfers                             uint64 // requests whose copy is in Transfer
	// Router is arrival to the router's first dispatch (Group.RouterDelay,
	// router_time.go); Bootstrap the dispatch to joining the prefill
	// queue (SGLang's bootstrap, 0 elsewhere); Handoff the end of the prefill forward to
	// the KV's arrival (waiting for a copy thread, then the copy), summed
	// over the Transfers.
	Router, Bootstrap, Handoff float64
}

// PhaseTruth returns group's sums so far.
func (m *Model) PhaseTruth(group string) PhaseTruth {
	if t := m.phases[group]; t != nil {
		return *t
	}
	return PhaseTruth{}
}

// phaseDone adds a request that completed on decode engine d.
func (m *Model) phaseDone(d *engine, r *request) {
	if m.phases == nil {
		m.phases = map[string]*PhaseTruth{}
	}
	name := d.inst.grp.spec.Name
	t := m.phases[name]
	if t == nil {
		t = &PhaseTruth{}
		m.phases[name] = t
	}
	t.Requests++
	t.Router += float64(r.routed-r.arrival) / 1e9
	t.Bootstrap += float64(r.queued-r.sent) / 1e9
	t.Queue += float64(r.pStart-r.queued) / 1e9
	t.Prefill += float64(r.pEnd-r.pStart) / 1e9
	if !r.recompute {
		t.Transfer += float64(r.dReady-r.xferStart) / 1e9
		t.Handoff += float64(r.dReady-r.pEnd) / 1e9
		t.Transfers++
	}
	t.FirstDecode += float64(r.firstTok-r.dStart) / 1e9
	l := m.latenciesOf(name)
	addLatency(&l.e2e, m.now, r)
}

// RequestLatency is one request's true latency, what a user sees whatever
// the engines time: the instant it ended (its first token for TTFT, its
// last for E2E) in simulated time since the run's start, and its length.
type RequestLatency struct {
	At      time.Duration
	Seconds float64
}

// latencies are a group's newest TTFTs and E2Es.
type latencies struct {
	ttft, e2e []RequestLatency
}

// maxLatencies bounds the requests a group keeps (the newest, halved when
// full), so that a long demo does not grow without end.
const maxLatencies = 1 << 17

// addLatency appends the latency from r's arrival to now to dst.
func addLatency(dst *[]RequestLatency, now int64, r *request) {
	ls := append(*dst, RequestLatency{At: time.Duration(now), Seconds: float64(now-r.arrival) / 1e9})
	if len(ls) > maxLatencies {
		ls = append(ls[:0], ls[len(ls)/2:]...)
	}
	*dst = ls
}

// firstToken records r's TTFT on decode engine d, as its client and
// its router see it: once, a migrated request's first token being its
// first attempt's where that one had it.
func (m *Model) firstToken(d *engine, r *request) {
	if r.streamed {
		return
	}
	r.streamed, r.clientFirst = true, m.now
	l := m.latenciesOf(d.inst.grp.spec.Name)
	addLatency(&l.ttft, m.now, r)
	m.routerFirstToken(r)
}

// latenciesOf is group's latencies, made on first use.
func (m *Model) latenciesOf(group string) *latencies {
	if m.latencies == nil {
		m.latencies = map[string]*latencies{}
	}
	l := m.latencies[group]
	if l == nil {
		l = &latencies{}
		m.latencies[group] = l
	}
	return l
}

// RequestTruth returns the true TTFTs and E2Es of group's newest requests
// (at least the newest 65536 of each), oldest first: the truth the whole
// request's SLO is checked against (docs/advisor.md#the-whole-requests-slo).
func (m *Model) RequestTruth(group string) (ttft, e2e []RequestLatency) {
	l := m.latencies[group]
	if l == nil {
		return nil, nil
	}
	return slices.Clone(l.ttft), slices.Clone(l.e2e)
}

// sglangStages are the prefill-side stages of SGLang's
// sglang:per_stage_req_latency_seconds (RequestStage in
// python/sglang/srt/managers/schedule_batch.py, sgl-project/sglang PR
// #36374): each is the time since the previous stage ended.
var sglangStages = [4]string{"prefill_bootstrap", "prefill_waiting", "prefill_forward", "prefill_transfer_kv_cache"}

// sglangStageBuckets cover milliseconds to minutes, as the TTFT buckets do.
var sglangStageBuckets = newTable(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60)

// prefillStagesDone observes a request's prefill-side stages on prefill
// engine p as its KV leaves (Profile.PrefillStages): bootstrap until it
// joined the waiting queue, waiting, the forward pass, and the hand-off
// from the forward's end to the copy's.
func (m *Model) prefillStagesDone(p *engine, r *request) {
	if !p.inst.grp.prof.PrefillStages {
		return
	}
	s := p.stats
	for i, d := range [4]int64{r.queued - r.sent, r.pStart - r.queued, r.pEnd - r.pStart, m.now - r.pEnd} {
		h := &s.Stages[i]
		if h.tbl == nil {
			*h = newHistogram(sglangStageBuckets)
		}
		h.observe(float64(d) / 1e9)
	}
}

// sglStageHists prints sglang:per_stage_req_latency_seconds, one child per
// scheduler and stage once observed.
func sglStageHists(dst []byte, v *InstanceView) []byte {
	const name, help = "sglang:per_stage_req_latency_seconds", "The latency of each stage of requests"
	var lb [5]label
	header := false
	for _, s := range v.Engines {
		for i, stage := range sglangStages {
			hist := &s.Stages[i]
			if hist.count == 0 || hist.tbl == nil {
				continue
			}
			if !header {
				dst = appendHeader(dst, name, help, "histogram")
				header = true
			}
			base := sglSchedulerLabels(v, s, &lb)
			st := label{"stage", stage}
			dst = appendSample(dst, name, "_sum", base, hist.sum, st)
			var acc uint64
			for k, le := range hist.tbl.le {
				acc += hist.counts[k]
				dst = appendSample(dst, name, "_bucket", base, float64(acc), label{"le", le}, st)
			}
			dst = appendSample(dst, name, "_count", base, float64(acc), st)
		}
	}
	return dst
}
