package ledger

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// Buckets are the increases of the latency and phase histograms over the
// window W that ends at the newest point, one entry per instance that
// exported the histogram, each in its own buckets (SLO attainment reads
// every instance in its own buckets; see docs/advisor.md#slo-attainment).
type Buckets struct {
	Time    time.Time `json:"time"`
	Seconds float64   `json:"window_seconds"`
	Prefill RoleBuckets
	Decode  RoleBuckets
	// KVXfer is the connectors' transfer time, from every instance that
	// moves KV.
	KVXfer []slo.Hist
	// Request is what times whole requests: the routers, the decode
	// instances that time from the arrival, and the two legs of the
	// engines that split a request (docs/advisor.md#the-whole-requests-slo).
	Request slo.RequestInput `json:"-"`
}

// RoleBuckets are the histograms of the instances of one role.
type RoleBuckets struct {
	TTFT, ITL, E2E         []slo.Hist
	Queue, Prefill, Decode []slo.Hist
	Up                     int // instances up whose histograms were read
	// Bootstrap is SGLang's bootstrap and allocation (phases.go).
	Bootstrap []slo.Hist
	// E2ERate is requests/s: each instance's E2E observations over the
	// real time between its two samples, summed.
	E2ERate float64
}

// routerTimeParts are the router's own times that lie outside both legs
// of a split request: the router phase's parts (phases.go), then its
// hand-over between the legs.
var routerTimeParts = append(routerParts[:len(routerParts):len(routerParts)], engine.HandoverTime)

// Buckets returns the window's histogram increases at the newest point, and
// false before the first point.
func (l *Ledger) Buckets() (Buckets, bool) { return l.bucketsOf("", false) }

// PoolBuckets is Buckets over the instances of pool only, as the newest
// point groups them (InstancePoint.Pool), so that a pool's SLO attainment
// reads only its own instances.
func (l *Ledger) PoolBuckets(pool string) (Buckets, bool) { return l.bucketsOf(pool, true) }

func (l *Ledger) bucketsOf(pool string, onePool bool) (Buckets, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	newest, ok := l.hist.Latest()
	if !ok {
		return Buckets{}, false
	}
	now := newest.Time
	var keep map[string]bool
	if onePool {
		keep = map[string]bool{}
		for i := range newest.Instances {
			if ip := &newest.Instances[i]; ip.Pool == pool {
				keep[ip.Target] = true
			}
		}
	}
	w := l.cfg.Window
	out := Buckets{Time: now, Seconds: w.Seconds()}
	add := func(dst *[]slo.Hist, t *target, m engine.Metric) (histPart, bool) {
		p, ok := t.histWindow(m.HistogramIndex(), now, w)
		if ok {
			*dst = append(*dst, slo.Hist{Bounds: p.bounds, Counts: p.counts, Sum: p.sum, Count: p.count})
		}
		return p, ok
	}
	for _, name := range l.names {
		t := l.targets[name]
		if l.unavailable(t, now) != "" || (onePool && !keep[name]) {
			continue
		}
		// Each phase from the instance's first source, as the pools'
		// TTFT phases read them (phases.go): SGLang's per-stage latency
		// before the queue, prefill and copy times.
		add(&out.KVXfer, t, firstExported(t, engine.StageKVTransfer, engine.KVXferTime))
		var r *RoleBuckets
		var whole *slo.Latencies
		switch t.effectiveRole() {
		case engine.Prefill:
			r, whole = &out.Prefill, &out.Request.PrefillLeg
		case engine.Decode:
			r, whole = &out.Decode, &out.Request.DecodeLeg
			if t.effectiveEngine().DecodeFromArrival() {
				whole = &out.Request.Arrival
			}
		case engine.Router:
			add(&out.Request.Router.TTFT, t, engine.TTFT)
			add(&out.Request.Router.ITL, t, engine.ITL)
			add(&out.Request.Router.E2E, t, engine.E2E)
			if out.Request.RouterTime == nil {
				out.Request.RouterTime = make([][]slo.Hist, len(routerTimeParts))
			}
			for i, m := range routerTimeParts {
				add(&out.Request.RouterTime[i], t, m)
			}
			continue
		default:
			continue
		}
		r.Up++
		if _, ok := add(&r.TTFT, t, engine.TTFT); ok {
			whole.TTFT = append(whole.TTFT, r.TTFT[len(r.TTFT)-1])
		}
		if _, ok := add(&r.ITL, t, engine.ITL); ok {
			whole.ITL = append(whole.ITL, r.ITL[len(r.ITL)-1])
		}
		p, ok := add(&r.E2E, t, engine.E2E)
		if ok {
			whole.E2E = append(whole.E2E, r.E2E[len(r.E2E)-1])
		}
		if ok && len(p.counts) > 0 && p.seconds > 0 {
			r.E2ERate += p.counts[len(p.counts)-1] / p.seconds
		}
		add(&r.Queue, t, firstExported(t, engine.StageWaiting, engine.QueueTime))
		add(&r.Prefill, t, firstExported(t, engine.StageForward, engine.PrefillTime))
		add(&r.Decode, t, engine.DecodeTime)
		add(&r.Bootstrap, t, firstExported(t, engine.StageBootstrap, engine.KVBootstrapTime))
	}
	out.Request.Rate, out.Request.Seconds = out.Decode.E2ERate, out.Seconds
	return out, true
}

// effectiveEngine is the configured engine, or the one the exposition
// shows.
func (t *target) effectiveEngine() engine.Engine {
	if t.info.Engine == engine.EngineAuto {
		return t.engine
	}
	return t.info.Engine
}

// effectiveRole is the configured role, or the one the exposition shows.
func (t *target) effectiveRole() engine.Role {
	if t.info.Role == engine.RoleUnknown {
		return t.role
	}
	return t.info.Role
}
