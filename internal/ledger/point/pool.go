package point

import (
	"slices"

	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// PoolPoint is one pool at a tick (docs/pools.md): the sums of its own
// instances, by the rules the deployment's sums follow, and what needs
// their counters or histograms. The ledger groups the instances once per
// tick (InstancePoint.Pool); the verdict, the advice, the API, the
// recorder and the report read the pools from the point.
type PoolPoint struct {
	Name string `json:"name"`
	// Model is the model the pool serves: the configured model label of
	// its first target that has one, else the model its exposition names.
	Model string `json:"model,omitempty"`
	// KVRequest is the pool's B_request (PoolRequest); KVRequestWhy says
	// why it has none.
	KVRequest    kvsize.Request `json:"kv_request_bytes"`
	KVRequestWhy string         `json:"-"`
	// Instances counts the pool's targets, its routers included.
	Instances int        `json:"instances"`
	Prefill   StagePoint `json:"prefill"`
	// KV is the pool's KV transfer: its own bytes and transfers, and KV
	// req/s by its own B_request.
	KV     KVPoint    `json:"kv"`
	Decode StagePoint `json:"decode"`
	// Router is the pool's routers' sum; absent with the reason where it
	// has none.
	Router   RouterPoint `json:"router"`
	Failures Failures    `json:"kv_failures"`
	Phases   Phases      `json:"ttft_phases"`
}

// Serving says whether the pool has an instance other than a router: a
// router is read with the pool it serves, never as a pool of its own.
func (pp *PoolPoint) Serving() bool { return pp.Instances > pp.Router.Instances }

// Pool returns the pool name at p, and false when p has none of it.
func (p *Point) Pool(name string) (*PoolPoint, bool) {
	for i := range p.Pools {
		if p.Pools[i].Name == name {
			return &p.Pools[i], true
		}
	}
	return nil, false
}

// RouterOf returns the routers of pool at p, absent with the reason where
// it has none.
func (p *Point) RouterOf(pool string) RouterPoint {
	if pp, ok := p.Pool(pool); ok {
		return pp.Router
	}
	return NoRouter(pool)
}

// SplitPools is w's points pool by pool: for every pool that serves in
// any of them, its view at every point (PoolView). The advisor learns
// each pool's capacity from these, live and in a report.
func SplitPools(w []Point) map[string][]Point {
	names := PoolNames(w)
	out := make(map[string][]Point, len(names))
	for _, name := range names {
		out[name] = PoolWindow(w, name)
	}
	return out
}

// PoolNames lists the pools that serve at any point of w, sorted: a pool
// of routers alone serves no one.
func PoolNames(w []Point) []string {
	var out []string
	for i := range w {
		for k := range w[i].Pools {
			if pp := &w[i].Pools[k]; pp.Serving() && !slices.Contains(out, pp.Name) {
				out = append(out, pp.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// PoolWindow is pool name's view at every point of w (PoolView).
func PoolWindow(w []Point, name string) []Point {
	out := make([]Point, len(w))
	for i := range w {
		out[i] = w[i].PoolView(name)
	}
	return out
}

// PoolView is pool name at p as a point of its own: its stages, routers
// and instances, and its PoolPoint as the point's only pool. A point
// where the pool has no instance gives its stages absent with that
// reason.
func (p *Point) PoolView(name string) Point {
	v := Point{Time: p.Time, GlobalKVBytes: p.GlobalKVBytes}
	k := slices.IndexFunc(p.Pools, func(pp PoolPoint) bool { return pp.Name == name })
	if k < 0 {
		why := Absent("pool " + name + " has no instance at this point")
		v.Prefill, v.Decode = absentStage(why), absentStage(why)
		v.KV = KVPoint{Instant: why, Window: why, BytesInstant: why, BytesWindow: why, Transfers: why, Failures: why, XferTime: Quant{why, why, why}}
		v.Router = NoRouter(name)
		return v
	}
	pp := &p.Pools[k]
	v.Prefill, v.KV, v.Decode, v.Router = pp.Prefill, pp.KV, pp.Decode, pp.Router
	if pp.Router.Instances > 0 {
		v.Routers = []RouterPoint{pp.Router}
	}
	v.Pools = p.Pools[k : k+1 : k+1]
	v.Instances = poolInstances(p.Instances, name)
	return v
}

// poolInstances returns the instances of pool name, which a view only
// reads. Where they are one run of the point's instances (one pool, or
// targets named pool by pool) that run is returned as is, capped so
// nothing can append into the point: at thousands of instances a copy per
// point and pool was most of a verdict's cost.
func poolInstances(all []InstancePoint, name string) []InstancePoint {
	first, last, n := -1, -1, 0
	for j := range all {
		if all[j].Pool == name {
			if first < 0 {
				first = j
			}
			last = j
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if n == last-first+1 {
		return all[first : last+1 : last+1]
	}
	out := make([]InstancePoint, 0, n)
	for j := range all {
		if all[j].Pool == name {
			out = append(out, all[j])
		}
	}
	return out
}

func absentStage(why Num) StagePoint {
	q := Queues{why, why, why, why}
	return StagePoint{Instant: why, Window: why, Running: why, Waiting: why, WaitingBy: WaitingReasons{why, why}, Queues: q, KVUsage: why, PromptTPS: why, GenTPS: why,
		TTFT: Quant{why, why, why}, ITL: Quant{why, why, why}, E2E: Quant{why, why, why}}
}
