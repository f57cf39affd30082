package sim

import (
	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// Load shed before the engine queue: a group with MaxQueued turns away an
// arrival whose prefill engine already holds that many requests waiting,
// as a router's flow control or an engine's admission cap does (vLLM's
// max_num_queued_reqs, SGLang's max_queued_requests). Where the group has
// a router, the router sheds and counts it (llm-d's flow control outcome
// RejectedCapacity, Dynamo's error_type="overload"); else the prefill
// engine's server does (vLLM's admission_rejections_total, SGLang's
// num_queue_rejected_requests_total{reason="queue_full"}).

// shedding is a group's offered and shed arrivals, kept only where it
// sheds, so that the truth is exact at any instant.
type shedding struct {
	offered, shed []int64
}

// ShedTruth is a group's load at an instant: every request offered to its
// prefill engines and those shed before any queued them.
type ShedTruth struct {
	Group   string `json:"group"`
	Offered int64  `json:"offered"`
	Shed    int64  `json:"shed"`
}

// validateShed checks MaxQueued: an engine without a shed counter of its
// own needs a router to count what it sheds.
func (g Group) validateShed(path string, bad func(string, string, ...any) error) error {
	switch {
	case g.MaxQueued < 0:
		return bad(path+".max_queued", "must be >= 0")
	case g.MaxQueued > 0 && g.Router == "" && g.Engine == string(ptd.TensorRTLLM):
		return bad(path+".max_queued", "needs a router for %s, which counts no shed load", g.Engine)
	}
	return nil
}

// shedAt decides whether an arrival to p is shed, and counts it.
func (m *Model) shedAt(g *group, p *engine) bool {
	limit := g.spec.MaxQueued
	if limit <= 0 {
		return false
	}
	g.shed.offered = append(g.shed.offered, m.now)
	if len(p.waiting)+len(p.bootstrap) < limit {
		return false
	}
	g.shed.shed = append(g.shed.shed, m.now)
	if g.spec.Router == "" {
		p.stats.Shed++
	}
	return true
}

// shedTruth is the shedding truth of the groups that shed, at t.
func (m *Model) shedTruth(t int64) []ShedTruth {
	var out []ShedTruth
	for _, g := range m.groups {
		if g.spec.MaxQueued > 0 {
			out = append(out, ShedTruth{Group: g.spec.Name, Offered: int64(countAt(g.shed.offered, t)), Shed: int64(countAt(g.shed.shed, t))})
		}
	}
	return out
}

// ShedTruth is group's shedding truth at d (zero for a group that does
// not shed).
func (m *Model) ShedTruth(group string, d int64) ShedTruth {
	for _, s := range m.shedTruth(min(d, m.now)) {
		if s.Group == group {
			return s
		}
	}
	return ShedTruth{Group: group}
}
