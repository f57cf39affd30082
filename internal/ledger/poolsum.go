package ledger

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// latency is one instance's latency histograms over the window, read once
// and added to the deployment's sums and its pool's.
type latency struct {
	ttft, itl, e2e, xfer histPart
	has                  [4]bool
}

func (r *instanceRead) latency() latency {
	var l latency
	if r.why != "" {
		return l
	}
	for i, m := range [...]engine.Metric{engine.TTFT, engine.ITL, engine.E2E, engine.KVXferTime} {
		part := [...]*histPart{&l.ttft, &l.itl, &l.e2e, &l.xfer}[i]
		*part, l.has[i] = r.t.histWindow(m.HistogramIndex(), r.now, r.window)
	}
	return l
}

// poolSum adds up the instances of one pool, or of the whole deployment,
// at a tick: each stage over its role's instances, the KV transfer over
// the instances whose KV bytes count, the routers; a pool's also its
// failures and TTFT phases.
type poolSum struct {
	name      string
	model     string
	instances int

	prefill, decode stageSum
	kv              kvSum
	router          routerSum
	failures        failureSum
	phases          phaseSum
}

// add adds one instance read at the tick. kvCounts says its KV counters
// count (kvCounted): a transfer library's endpoint beside an engine's
// connector counts the same transfers.
func (s *poolSum) add(in *instanceRead, ip *InstancePoint, lat *latency, kr *kvRates, w *work, kvCounts bool) {
	s.instances++
	if in.t.has(engine.KVBytes) && kvCounts {
		s.kv.add(in, ip, lat, kr, w)
	}
	switch in.role {
	case engine.Prefill:
		s.prefill.add(in, ip, lat, w)
	case engine.Decode:
		s.decode.add(in, ip, lat, w)
	case engine.Router:
		s.router.add(in, lat)
	}
}

// addPool adds what only a pool keeps of an instance: its failures and
// the phases of its TTFT.
func (s *poolSum) addPool(in *instanceRead, kr *kvRates, kvCounts bool) {
	s.failures.add(in, kr, kvCounts)
	s.phases.add(in)
}

// pools adds up a tick's instances, the deployment's sums and each pool's.
type pools struct {
	all    poolSum
	byName map[string]*poolSum
}

func (ps *pools) pool(name string) *poolSum {
	s := ps.byName[name]
	if s == nil {
		if ps.byName == nil {
			ps.byName = map[string]*poolSum{}
		}
		s = &poolSum{name: name}
		ps.byName[name] = s
	}
	return s
}

// set writes the deployment's sums and every pool's into p. noKV is the
// reason of a KV value no instance has.
func (ps *pools) set(p *Point, cfg *Config, noKV string) {
	p.Prefill = ps.all.prefill.point("no prefill instance configured", "prefill")
	p.Decode = ps.all.decode.point("no decode instance configured", "decode")
	p.KV = ps.all.kv.point(noKV)

	names := make([]string, 0, len(ps.byName))
	for n := range ps.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	p.Pools = make([]PoolPoint, len(names))
	for i, n := range names {
		p.Pools[i] = ps.byName[n].point(cfg)
	}
	p.Router, p.Routers = ps.routers(p.Pools)
	p.KV.Instant, p.KV.Window = ps.kvRequests(p, cfg)
}

// point is the pool's point.
func (s *poolSum) point(cfg *Config) PoolPoint {
	pp := PoolPoint{Name: s.name, Model: s.model, Instances: s.instances}
	pp.KVRequest, pp.KVRequestWhy = PoolRequest(s.name, cfg.PoolRequests, cfg.KVRequest)
	pp.Prefill = s.prefill.point("the pool has no prefill instance", "prefill")
	pp.Decode = s.decode.point("the pool has no decode instance", "decode")
	pp.KV = s.kv.point("no instance of the pool exports a KV byte counter")
	perRequest := func(bytes Num) Num {
		switch {
		case !bytes.OK():
			return bytes
		case pp.KVRequest.Bytes <= 0:
			return Absent(pp.KVRequestWhy)
		}
		return Val(bytes.V / float64(pp.KVRequest.Bytes))
	}
	pp.KV.Instant, pp.KV.Window = perRequest(pp.KV.BytesInstant), perRequest(pp.KV.BytesWindow)
	if s.router.instances > 0 {
		pp.Router = s.router.point(s.name)
	} else {
		pp.Router = NoRouter(s.name)
	}
	pp.Failures, pp.Phases = s.failures.point(), s.phases.point()
	pp.Failures.Shed, pp.Failures.Migrated = s.failures.offeredRates(pp.Decode.Window, pp.Prefill.Window)
	return pp
}

// routers is the deployment's router sum and the routers of each pool
// that has some. Where a pool that serves has no router, the routers'
// arrivals are not the deployment's.
func (ps *pools) routers(pools []PoolPoint) (RouterPoint, []RouterPoint) {
	if ps.all.router.instances == 0 {
		return NoRouter(""), nil
	}
	all := ps.all.router.point("")
	var bare []string
	var each []RouterPoint
	for i := range pools {
		pp := &pools[i]
		switch {
		case pp.Router.Instances > 0:
			each = append(each, pp.Router)
		case pp.Serving() && !slices.Contains(bare, pp.Name):
			bare = append(bare, pp.Name)
		}
	}
	if len(bare) > 0 {
		why := "pools without a router (" + strings.Join(bare, ", ") + "): the routers' sum is not the deployment's"
		all.Arrival, all.RemotePrefill, all.DecodeOnly = Absent(why), Absent(why), Absent(why)
	}
	return all, each
}

// kvRequests is the deployment's KV req/s. Where pools have their own
// B_request (Config.PoolRequests) it is the sum of the pools', each
// pool's bytes by its own; one pool without one leaves the sum absent
// with its reason, since a sum that leaves a pool out would read as the
// whole. Otherwise it is the deployment's bytes by its B_request.
func (ps *pools) kvRequests(p *Point, cfg *Config) (instant, window Num) {
	perRequest := func(bytes Num) Num {
		switch {
		case !bytes.OK():
			return bytes
		case cfg.KVRequest.Bytes <= 0:
			return Absent("B_request is not set (-kv-bytes-per-request, or -model-config with -seq-len)")
		}
		return Val(bytes.V / float64(cfg.KVRequest.Bytes))
	}
	if len(cfg.PoolRequests) == 0 || ps.all.kv.instances == 0 {
		return perRequest(p.KV.BytesInstant), perRequest(p.KV.BytesWindow)
	}
	instant, window = Val(0), Val(0)
	for i := range p.Pools {
		pp := &p.Pools[i]
		if pp.KV.Instances == 0 {
			continue
		}
		if pp.KVRequest.Bytes <= 0 {
			why := Absent("pool " + pp.Name + ": " + pp.KVRequestWhy)
			return why, why
		}
		instant = addPerRequest(instant, pp.KV.BytesInstant, pp.KVRequest.Bytes)
		window = addPerRequest(window, pp.KV.BytesWindow, pp.KVRequest.Bytes)
	}
	return instant, window
}

// poolsAt is a tick's sums: each target read once, its pool named once.
func (l *Ledger) poolsAt(now time.Time, p *Point, of func(*InstancePoint) string, meta map[string]TargetMeta) (ps pools, notes []string, kvTotal float64) {
	counted := l.kvCounted()
	p.Instances = make([]InstancePoint, 0, len(l.names))
	for _, name := range l.names {
		t := l.targets[name]
		kvCounts := counted(t)
		kvTotal += t.globalKV(kvCounts, &l.removedKV)
		notes = append(notes, t.notes...)
		in := l.read(t, now)
		ip := in.point(name)
		ip.Pool = of(&ip)
		p.Instances = append(p.Instances, ip)
		lat, kr, w := in.latency(), in.kvRates(), in.work()
		ps.all.add(&in, &ip, &lat, &kr, &w, kvCounts)
		pool := ps.pool(ip.Pool)
		if pool.model == "" {
			pool.model = meta[name].ShownModel()
		}
		pool.add(&in, &ip, &lat, &kr, &w, kvCounts)
		pool.addPool(&in, &kr, kvCounts)
	}
	return ps, notes, kvTotal
}
