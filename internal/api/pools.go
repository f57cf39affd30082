package api

import (
	"sort"
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

// pooling is how instances fall into pools and what each pool's B_request
// is, from the targets' metadata and the ledger's configuration.
type pooling struct {
	meta map[string]ledger.TargetMeta
	of   diagnose.GroupOf
	own  map[string]kvsize.Request
	dep  kvsize.Request
}

func newPooling(meta map[string]ledger.TargetMeta, cfg ledger.Config, deployment float64) pooling {
	pl := pooling{meta: meta, of: ledger.PoolOf(meta), own: cfg.PoolRequests, dep: cfg.KVRequest}
	if deployment > 0 && float64(pl.dep.Bytes) != deployment {
		pl.dep = kvsize.Request{Bytes: int64(deployment), Basis: kvsize.BasisConfig}
	}
	return pl
}

// request is a pool's B_request and, without one, why.
func (pl pooling) request(pool string) (kvsize.Request, string) {
	return ledger.PoolRequest(pool, pl.own, pl.dep)
}

// bytesOf is request in the form diagnose.Config.BytesOf takes.
func (pl pooling) bytesOf(pool string) (float64, string) {
	r, why := pl.request(pool)
	return float64(r.Bytes), why
}

// pools sums p's instances pool by pool, in name order.
func (pl pooling) pools(p *ledger.Point) []Pool {
	count := map[string]int{}
	model := map[string]string{}
	for i := range p.Instances {
		ip := &p.Instances[i]
		name := pl.of(ip)
		count[name]++
		if model[name] == "" {
			model[name] = pl.meta[ip.Target].ShownModel()
		}
	}
	names := make([]string, 0, len(count))
	for n := range count {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Pool, 0, len(names))
	for _, name := range names {
		g := diagnose.GroupPoints([]ledger.Point{*p}, name, pl.of, pl.bytesOf)[0]
		r, why := pl.request(name)
		pool := Pool{Name: name, Model: model[name], KVRequest: r, Prefill: g.Prefill, KV: g.KV, Decode: g.Decode, Router: p.RouterOf(name), Instances: count[name]}
		pool.KVFailures, pool.TTFTPhases = poolFailures(p, name)
		if pool.Model == "" {
			pool.Reasons = map[string]string{"model": whyNoModel}
		}
		if why != "" {
			if pool.Reasons == nil {
				pool.Reasons = map[string]string{}
			}
			pool.Reasons["kv_request_bytes"] = why
		}
		out = append(out, pool)
	}
	return out
}

// splitPools is each pool's points over w, as the verdict groups them.
func (s *Server) splitPools(w []ledger.Point) map[string][]ledger.Point {
	return s.diagnoseConfig(s.Ledger.Config()).Split(w)
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
