package api

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Pool is one pool of /api/v1/snapshot (docs/pools.md): the instances that
// serve one model, with the same stage objects as the point, summed over
// the pool's instances only, and KV req/s by the pool's own B_request. Its
// verdict is verdict.groups' entry of the same name.
type Pool struct {
	Name      string            `json:"name"`
	Model     string            `json:"model,omitempty"`
	KVRequest kvsize.Request    `json:"kv_request_bytes"`
	Prefill   ledger.StagePoint `json:"prefill"`
	KV        ledger.KVPoint    `json:"kv"`
	Decode    ledger.StagePoint `json:"decode"`
	// Router is the pool's routers' arrivals, rejections, queue, TTFT
	// and P/D decisions; absent with the reason where it has none.
	Router    ledger.RouterPoint `json:"router"`
	Instances int                `json:"instances"`
	// KVFailures are the pool's KV failures by class and its recompute
	// on decode (docs/pools.md); nil only in a response that lacks them.
	KVFailures *ledger.Failures `json:"kv_failures"`
	// TTFTPhases are where the pool's TTFT goes (docs/pools.md).
	TTFTPhases *ledger.Phases `json:"ttft_phases"`
	// SLO is the pool's SLO attainment over the window, read from its own
	// instances' histograms; SLOAbsent says why it is not there.
	SLO       *advice.SLOReport `json:"slo,omitempty"`
	SLOAbsent string            `json:"slo_absent,omitempty"`
	// KVNote says what the pool's KV req/s is where one transfer carries
	// other than its B_request (prefix-cache hits): bytes ÷ B_request, not
	// a request count; kv.transfers_per_second counts the transfers.
	KVNote string `json:"kv_note,omitempty"`
	// Reasons says why Model or KVRequest is not known.
	Reasons map[string]string `json:"reasons,omitempty"`
}

// pools is p's pools as the snapshot serves them, with each pool's verdict
// facts from v (nil: none yet): the ledger's pool points, in name order.
func pools(p *ledger.Point, v *diagnose.Verdict) []Pool {
	out := make([]Pool, 0, len(p.Pools))
	for i := range p.Pools {
		pp := &p.Pools[i]
		pool := Pool{Name: pp.Name, Model: pp.Model, KVRequest: pp.KVRequest, Prefill: pp.Prefill, KV: pp.KV, Decode: pp.Decode,
			Router: pp.Router, Instances: pp.Instances, KVFailures: &pp.Failures, TTFTPhases: &pp.Phases}
		if pool.Model == "" {
			pool.Reasons = map[string]string{"model": whyNoModel}
		}
		if pp.KVRequestWhy != "" {
			if pool.Reasons == nil {
				pool.Reasons = map[string]string{}
			}
			pool.Reasons["kv_request_bytes"] = pp.KVRequestWhy
		}
		if g := groupOf(v, pp.Name); g != nil && g.BytesSkew {
			pool.KVNote = fmt.Sprintf("one KV transfer carries %.3g GB on average, %+.0f%% off B_request: KV req/s is KV bytes ÷ B_request, not a request count; transfers/s counts the transfers",
				g.BytesPerTransfer/1e9, 100*(g.BytesPerTransfer/float64(pp.KVRequest.Bytes)-1))
		}
		out = append(out, pool)
	}
	return out
}

// groupOf is pool's verdict in v, nil where v has none.
func groupOf(v *diagnose.Verdict, pool string) *diagnose.GroupVerdict {
	if v == nil {
		return nil
	}
	for i := range v.Groups {
		if v.Groups[i].Group == pool {
			return &v.Groups[i]
		}
	}
	return nil
}

// poolStages is each pool's verdict stage now, for ptd_pool_bottleneck_stage.
func (s *Server) poolStages() map[string]string {
	v := s.verdictAt(time.Time{})
	if v == nil {
		return nil
	}
	out := make(map[string]string, len(v.Groups))
	for _, g := range v.Groups {
		out[g.Group] = string(g.Class)
	}
	return out
}

// targetPools is the pool of each target whose pool a label names, for
// ptd_target_pool: the generated rules of the ptdmon path read it there,
// since ptdmon's per-instance series name the model only, and otherwise
// name the pool by the model as the engines path does.
func (s *Server) targetPools() map[string]string {
	out := map[string]string{}
	for target, m := range s.Ledger.Meta() {
		if m.PoolLabelled && m.Pool != "" {
			out[target] = m.Pool
		}
	}
	return out
}
