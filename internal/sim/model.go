package sim

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Model is the discrete-event P/D cluster. Time is an offset from the
// model's epoch in nanoseconds; nothing in it reads a clock, so a test can
// run minutes of traffic in milliseconds and two models with the same seed
// and scenario are identical however AdvanceTo is chunked. It is not safe
// for concurrent use (Cluster serialises access).
type Model struct {
	sc        Scenario
	epoch     time.Time
	now       int64
	seq       uint64
	events    eventHeap
	rng       *rand.Rand
	jrng      *rand.Rand // service-time jitter, apart from arrivals
	jitter    float64
	groups    []*group
	instances []*instance
	byName    map[string]*instance
	nextReqID uint64
	dropped   uint64      // arrivals with no live instance to take them
	trtDone   []trtRecord // completed TensorRT-LLM requests, in completion order
	load      Load        // the scenario's load model, computed once

	fails failures // failed KV loads (failures.go)
	// migrants: requests lost with an instance that their router sends
	// again (migrate.go).
	migrants []*request
	phases   map[string]*PhaseTruth // by group (phases.go)
	// latencies are each group's completed requests' true times (phases.go).
	latencies map[string]*latencies

	// traced, if set, gets each completed request's journey (traces.go).
	traced func(journeyRecord)
	// completed, if set, gets each completed request (clients.go).
	completed func(Completion)
}

type group struct {
	idx      int
	spec     Group
	prof     *Profile  // the engine's behaviour and format
	prefill  []*engine // all engines of all prefill instances
	decode   []*engine
	rrP, rrD int
	route    routing  // router.go
	shed     shedding // shed.go
}

type instance struct {
	name      string
	role      string
	grp       *group
	engines   []*engine
	down      bool
	asleep    bool // vLLM's sleep mode (Scenario.Asleep): takes no traffic
	restarts  int
	upAt      []int64 // process start offsets (first is 0)
	pidBase   int
	truth     truthSeries
	formatter Format
	trt       *trtInstance // TensorRT-LLM iteration stats; nil for other engines
}

// engine is one scheduler (one DP rank) of an instance.
type engine struct {
	inst  *instance
	idx   int
	role  string
	gen   uint64 // bumped on restart; events of older generations are void
	stats *EngineStats

	// Prefill side.
	bootstrap  []*request // PreallocFirst: waiting for decode pre-allocation
	waiting    []*request
	batch      []*request // being prefilled
	busy       bool
	slotsUsed  int // batch + inflight
	inflight   int // prefilled, KV not yet sent
	xferQ      []*request
	threadBusy []bool
	threadReq  []*request // copy in flight per thread, for restarts
	freeThr    int

	// Decode side.
	prealloc  []*request // waiting for a KV slot
	receiving []*request // slot allocated, KV not yet arrived
	ready     []*request // KV arrived, waiting for the batch
	running   []*request
	stepping  bool
	dSlots    int
	stepNs    int64 // the length of the step under way (failures.go)

	// work: when the engine computed a batch or ran a step (busy.go).
	work busyLog
	// stepTokens: the tokens of the decode step under way (failures.go).
	stepTokens int

	// Utilisation integrals (engine-nanoseconds), for tests and /truth.
	busyNs     int64
	xferBusyNs int64
	occNs      float64
}

type request struct {
	id      uint64
	grp     *group
	p, d    *engine
	pGen    uint64
	dGen    uint64
	pSlot   bool
	dSlot   bool
	aborted bool
	arrival int64 // at the router, or the engines where there is none
	// routed: the router's first dispatch (router_delay after arrival);
	// sent: the dispatch of this attempt, where the engines' timings start
	// (a migrated attempt's is later than routed).
	routed, sent int64
	queued       int64 // entered prefill waiting
	pStart       int64
	pEnd         int64
	dSubmit      int64 // handed to decode (after prefill, or at arrival with PreallocFirst)
	xferStart    int64
	dReady       int64
	dStart       int64
	firstTok     int64
	generated    int
	stop         bool
	// decodeOnly: sent straight to decode, no prefill or KV transfer.
	decodeOnly bool
	// recompute: its KV load failed and decode computes its prompt
	// (failures.go); recomputed once a step has.
	recompute, recomputed bool
	hit                   bool // its prefix is cached on decode: it moves less KV
	// streamed: its client has had the first token, at clientFirst (an
	// earlier attempt's, for a migrated request).
	streamed    bool
	clientFirst int64
	// migrating: noted for migration, once (migrate.go).
	migrating bool
}

type eventKind uint8

const (
	evArrival eventKind = iota
	evPrefillDone
	evTransferDone
	evDecodeStep
	evDown
	evUp
	evDispatch // a router dispatches a request after its router_delay
)

type event struct {
	t      int64
	seq    uint64
	kind   eventKind
	grp    *group
	eng    *engine
	gen    uint64
	req    *request
	thread int
	inst   *instance
	down   int64
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq // FIFO among simultaneous events: deterministic
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// NewModel builds the cluster at time 0 (= epoch on the wall clock, used only
// for `_created` values and truth timestamps).
func NewModel(sc Scenario, seed int64, epoch time.Time) (*Model, error) {
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %q: %w", sc.Name, err)
	}
	m := &Model{
		sc:     sc,
		epoch:  epoch,
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		jrng:   rand.New(rand.NewPCG(uint64(seed), 0x6a09e667f3bcc908)),
		jitter: sc.JitterOrDefault(),
		byName: map[string]*instance{},
		load:   sc.LoadModel(),
		fails:  newFailures(seed),
	}
	pid := 900
	for gi, gs := range sc.Groups {
		prof := profileFor(gs.Engine) // Validate made sure there is one
		gs.Connector = prof.connector(gs.Connector)
		g := &group{idx: gi, spec: gs, prof: prof}
		m.groups = append(m.groups, g)
		mk := func(role string, n, dp int) {
			if dp <= 0 {
				dp = 1
			}
			letter := "p"
			if role == RoleDecode {
				letter = "d"
			}
			for i := 0; i < n; i++ {
				in := &instance{
					name: fmt.Sprintf("%s-%s%d", gs.Name, letter, i), role: role, grp: g,
					upAt: []int64{0}, pidBase: pid, formatter: prof.Format,
				}
				pid += 16
				if prof.IterationStats {
					in.trt = newTRTInstance()
				}
				for k := 0; k < dp; k++ {
					e := &engine{inst: in, idx: k, role: role}
					e.threadBusy = make([]bool, gs.Transfer.Threads)
					e.threadReq = make([]*request, gs.Transfer.Threads)
					e.freeThr = gs.Transfer.Threads
					e.stats = m.newStats(in, k)
					in.engines = append(in.engines, e)
					if role == RolePrefill {
						g.prefill = append(g.prefill, e)
					} else {
						g.decode = append(g.decode, e)
					}
				}
				m.instances = append(m.instances, in)
				m.byName[in.name] = in
			}
		}
		mk(RolePrefill, gs.Prefill.Instances, gs.Prefill.DP)
		mk(RoleDecode, gs.Decode.Instances, gs.Decode.DP)
		if gs.Rate > 0 {
			m.schedule(&event{t: m.nextArrival(g), kind: evArrival, grp: g})
		}
	}
	for _, name := range sc.Asleep {
		m.byName[name].asleep = true
	}
	for _, r := range sc.Restarts {
		m.schedule(&event{t: int64(r.At), kind: evDown, inst: m.byName[r.Instance], down: int64(r.Down)})
	}
	return m, nil
}

func (m *Model) newStats(in *instance, k int) *EngineStats {
	up := in.upAt[len(in.upAt)-1]
	created := float64(m.epoch.Add(time.Duration(up)).UnixNano())/1e9 + float64(k)*1e-4
	pid := in.pidBase + k + in.restarts*3
	return newEngineStats(in.grp.prof, k, in.grp.spec.Transfer.Threads, created, pid)
}

func (m *Model) schedule(e *event) {
	m.seq++
	e.seq = m.seq
	heap.Push(&m.events, e)
}

func (m *Model) expInterval(rate float64) int64 {
	return int64(math.Ceil(m.rng.ExpFloat64() / rate * 1e9))
}

// nextArrival is the time of the group's next arrival after now. Bursty
// arrivals are a Poisson stream in "active time" (the on-phases laid end to
// end), mapped back onto the clock.
func (m *Model) nextArrival(g *group) int64 {
	b := g.spec.Burst
	if b.Period <= 0 || b.Duty >= 1 {
		return m.now + m.expInterval(g.spec.Rate)
	}
	period := int64(b.Period)
	on := int64(float64(period) * b.Duty)
	if on <= 0 {
		on = 1
	}
	active := m.now/period*on + min(m.now%period, on)
	next := active + m.expInterval(g.spec.Rate/b.Duty)
	return next/on*period + next%on
}

// spread applies the scenario's jitter to a nominal service time.
func (m *Model) spread(ns int64) int64 {
	if m.jitter == 0 {
		return ns
	}
	return int64(float64(ns) * (1 + m.jitter*(2*m.jrng.Float64()-1)))
}

func secsToNs(s float64) int64 { return int64(math.Round(s * 1e9)) }

// Now is the simulated time reached so far.
func (m *Model) Now() time.Duration { return time.Duration(m.now) }

// Epoch is the wall-clock instant of simulated time 0.
func (m *Model) Epoch() time.Time { return m.epoch }

// Scenario returns the scenario the model runs.
func (m *Model) Scenario() Scenario { return m.sc }

// AdvanceTo processes every event with time <= t. Going backwards is a no-op:
// counters never run backwards.
func (m *Model) AdvanceTo(t time.Duration) {
	target := int64(t)
	for len(m.events) > 0 && m.events[0].t <= target {
		ev := heap.Pop(&m.events).(*event)
		m.now = ev.t
		m.dispatch(ev)
	}
	if target > m.now {
		m.now = target
	}
}

func (m *Model) dispatch(ev *event) {
	switch ev.kind {
	case evArrival:
		m.arrive(ev.grp)
		m.schedule(&event{t: m.nextArrival(ev.grp), kind: evArrival, grp: ev.grp})
	case evPrefillDone:
		if ev.gen == ev.eng.gen {
			if ev.eng.inst.trt != nil {
				m.trtPrefillDone(ev.eng)
			} else {
				m.prefillDone(ev.eng)
			}
		}
	case evTransferDone:
		if ev.gen == ev.eng.gen {
			aborted := ev.req.aborted
			m.transferDone(ev.eng, ev.thread, ev.req)
			if ev.eng.inst.trt != nil && !aborted {
				m.trtTransferDone(ev.eng, ev.req)
			}
		}
	case evDecodeStep:
		if ev.gen == ev.eng.gen {
			if ev.eng.inst.trt != nil {
				m.trtDecodeStep(ev.eng)
			} else {
				m.decodeStep(ev.eng)
			}
		}
	case evDown:
		m.takeDown(ev.inst)
		m.schedule(&event{t: m.now + ev.down, kind: evUp, inst: ev.inst})
	case evUp:
		m.bringUp(ev.inst)
	case evDispatch:
		m.dispatchRequest(ev.req)
	}
}

// pick returns the live engine with the least load, scanning round-robin from
// *rr so ties rotate.
func pick(es []*engine, rr *int, load func(*engine) int) *engine {
	var best *engine
	bestLoad := 0
	n := len(es)
	for k := 0; k < n; k++ {
		e := es[(*rr+k)%n]
		if e.inst.down || e.inst.asleep {
			continue
		}
		if l := load(e); best == nil || l < bestLoad {
			best, bestLoad = e, l
		}
	}
	*rr = (*rr + 1) % n
	return best
}

func prefillLoad(e *engine) int {
	return len(e.bootstrap) + len(e.waiting) + len(e.batch) + e.inflight
}

func decodeLoad(e *engine) int {
	return len(e.prealloc) + len(e.receiving) + len(e.ready) + len(e.running)
}

func (m *Model) arrive(g *group) {
	m.nextReqID++
	r := &request{id: m.nextReqID, grp: g, arrival: m.now}
	r.stop = m.rng.Float64() < m.sc.StopFraction
	if m.holdInRouter(r) {
		return
	}
	m.dispatchRequest(r)
}

// dispatchRequest sends a request that arrived to its engines: the
// router's decisions (decode-only, shed) are taken now.
func (m *Model) dispatchRequest(r *request) {
	g := r.grp
	r.routed, r.sent = m.now, m.now
	if m.routed(g) {
		m.routerDispatched(r, false)
		m.sendToDecode(g, r)
		return
	}
	// Drawn only where hits are configured, so other scenarios keep their
	// random streams.
	r.hit = g.spec.PrefixHit.Fraction > 0 && m.rng.Float64() < g.spec.PrefixHit.Fraction
	p := pick(g.prefill, &g.rrP, prefillLoad)
	if p == nil {
		m.routerDispatched(r, false)
		m.dropped++
		return
	}
	shed := m.shedAt(g, p)
	m.routerDispatched(r, shed)
	if !shed {
		m.toPrefill(r, p)
	}
}

// toPrefill hands r to prefill engine p (and, where decode allocates
// first, to a decode engine).
func (m *Model) toPrefill(r *request, p *engine) {
	g := r.grp
	r.p, r.pGen = p, p.gen
	if g.prof.PreallocFirst {
		d := pick(g.decode, &g.rrD, decodeLoad)
		if d == nil {
			m.dropped++
			return
		}
		r.d, r.dGen, r.dSubmit = d, d.gen, m.now
		p.bootstrap = append(p.bootstrap, r)
		d.prealloc = append(d.prealloc, r)
		m.kickAlloc(d)
		return
	}
	r.queued = m.now
	p.waiting = append(p.waiting, r)
	m.kickPrefill(p)
}

// kickAlloc gives free decode KV slots to pre-allocation requests in FIFO
// order.
func (m *Model) kickAlloc(d *engine) {
	slots := d.inst.grp.spec.Decode.KVSlots
	for d.dSlots < slots && len(d.prealloc) > 0 {
		r := d.prealloc[0]
		d.prealloc = d.prealloc[1:]
		d.dSlots++
		r.dSlot = true
		if r.decodeOnly {
			m.readyLocal(d, r)
			continue
		}
		d.receiving = append(d.receiving, r)
		if r.grp.prof.PreallocFirst {
			// Bootstrap done: the prefill side may now schedule it.
			p := r.p
			p.bootstrap = remove(p.bootstrap, r)
			r.queued = m.now
			p.waiting = append(p.waiting, r)
			m.kickPrefill(p)
		} else {
			// Prefill is done and its KV is parked; send it now.
			r.p.xferQ = append(r.p.xferQ, r)
			m.kickTransfer(r.p)
		}
	}
}

func remove(q []*request, r *request) []*request {
	for i, x := range q {
		if x == r {
			return append(q[:i], q[i+1:]...)
		}
	}
	return q
}
