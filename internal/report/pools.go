package report

import (
	"sort"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Pool is one pool's part of a report of a run that served more than one
// (docs/report.md#the-report): its stages over the run's steady span, summed
// over its own instances with KV req/s by its own B_request, its modal
// verdict there, and the capacity learned while its own stages were
// saturated with the advice sized for its own arrival rate, as the live
// pools of /api/v1/snapshot and /api/v1/advice have them.
type Pool struct {
	Name  string `json:"name"`
	Model string `json:"model,omitempty"`
	// KVRequest is the pool's B_request; KVRequestAbsent says why it has
	// none (its KV req/s is then absent).
	KVRequest       kvsize.Request    `json:"kv_request_bytes"`
	KVRequestAbsent string            `json:"kv_request_absent,omitempty"`
	Stages          Stages            `json:"stages"`
	Verdict         Modal             `json:"verdict"`
	Capacities      []advice.Capacity `json:"capacities"`
	Advice          *advice.Advice    `json:"advice"`
	AdviceWhy       string            `json:"advice_absent,omitempty"`
	// SLO is the pool's SLO attainment over the steady span, from its own
	// instances (its whole request's from its own router or legs), as the
	// live pools of /api/v1/snapshot have it.
	SLO       *advice.SLOReport `json:"slo,omitempty"`
	SLOAbsent string            `json:"slo_absent,omitempty"`
}

// poolVerdicts are one pool's verdicts: its class at each point of the
// range ("" where it had none) and its spans of equal verdicts.
type poolVerdicts struct {
	classes []diagnose.Class
	spans   []Span
}

// add records the pool's verdict g at point i of n, at t.
func (pv *poolVerdicts) add(i, n int, t time.Time, g diagnose.GroupVerdict) {
	if pv.classes == nil {
		pv.classes = make([]diagnose.Class, n)
	}
	pv.classes[i] = g.Class
	if k := len(pv.spans); k > 0 && pv.spans[k-1].Class == g.Class {
		pv.spans[k-1].To, pv.spans[k-1].Evidence, pv.spans[k-1].Notes = t, g.Evidence, g.Notes
		return
	}
	pv.spans = append(pv.spans, Span{From: t, To: t, Class: g.Class, Headline: g.Headline, Evidence: g.Evidence, Notes: g.Notes})
}

// poolsOf is the report of each pool over the steady span pts[lo:hi+1]
// (nil for a run of one pool, which the report's top already is).
func poolsOf(pts []ledger.Point, lo, hi int, verdicts map[string]*poolVerdicts, batch int, interval, window time.Duration, headroom float64) []Pool {
	split := ledger.SplitPools(pts)
	names := make([]string, 0, len(verdicts))
	for name := range verdicts {
		if split[name] != nil {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		return nil
	}
	sort.Strings(names)
	from, to := pts[lo].Time, pts[hi].Time
	out := make([]Pool, 0, len(names))
	for _, name := range names {
		gp := split[name]
		steady := gp[lo : hi+1]
		p := Pool{Name: name}
		p.Model, p.KVRequest, p.KVRequestAbsent = poolModel(name, pts)
		caps := advice.Learn(gp, advice.Options{Window: window})
		p.Capacities = caps
		p.Stages = stagesOf(steady, batch, interval, caps)
		pv := verdicts[name]
		var held []diagnose.Class
		for _, c := range pv.classes[lo : hi+1] {
			if c != "" {
				held = append(held, c)
			}
		}
		p.Verdict = modal(held, pv.spans, from, to)
		d := advice.EstimateDemand(steady, to.Sub(from)+interval)
		if a, err := advice.Advise(caps, d, headroom); err != nil {
			p.AdviceWhy = err.Error()
		} else {
			p.Advice = &a
		}
		out = append(out, p)
	}
	return out
}

// poolModel is the model pool serves and its B_request (or why it has
// none), as the newest point that holds it says.
func poolModel(pool string, pts []ledger.Point) (string, kvsize.Request, string) {
	for i := len(pts) - 1; i >= 0; i-- {
		if pp, ok := pts[i].Pool(pool); ok {
			return pp.Model, pp.KVRequest, pp.KVRequestWhy
		}
	}
	return "", kvsize.Request{Basis: kvsize.BasisUnset}, "no point holds pool " + pool
}

// poolStage is one stage of a pool as the HTML report lists it.
type poolStage struct {
	Key string
	*Stage
}

// StageList is the pool's stages in pipeline order, for the HTML report.
func (p *Pool) StageList() []poolStage {
	var out []poolStage
	for _, s := range stage.All {
		out = append(out, poolStage{string(s), p.Stages.of(s)})
	}
	return out
}
