package sim

import (
	"fmt"
	"time"
)

// refresh copies queue lengths and connector totals into the engines'
// exported stats; called right before rendering, at the modelled instant.
func (m *Model) refresh(in *instance) {
	g := in.grp.spec
	for _, e := range in.engines {
		s := e.stats
		s.KV = s.kv.Snapshot()
		m.refreshBusy(in, e)
		if e.role == RolePrefill {
			s.Running = len(e.batch)
			s.Queued = len(e.waiting)
			s.Waiting = len(e.waiting) + len(e.bootstrap)
			s.WaitCapacity, s.WaitDeferred = len(e.waiting), len(e.bootstrap)
			s.Bootstrap = len(e.bootstrap)
			s.Inflight = e.inflight
			s.Prealloc, s.TransferQueue = 0, 0
			s.KVUsage = float64(e.slotsUsed) / float64(g.Prefill.KVSlots)
			s.UsedTokens = e.slotsUsed * m.sc.InputTokens
			s.GenThroughput = 0
			continue
		}
		s.Running = len(e.running)
		s.Queued = len(e.ready)
		// vLLM counts requests waiting for remote KV as waiting.
		s.Waiting = len(e.prealloc) + len(e.receiving) + len(e.ready)
		// vLLM's reasons: a request whose remote KV is on its way (its
		// blocks allocated, WAITING_FOR_REMOTE_KVS) is deferred; one
		// waiting for blocks or for a place in the batch, for capacity.
		s.WaitCapacity, s.WaitDeferred = len(e.prealloc)+len(e.ready), len(e.receiving)
		s.Bootstrap, s.Inflight = 0, 0
		s.Prealloc = len(e.prealloc)
		s.TransferQueue = len(e.receiving)
		s.KVUsage = float64(e.dSlots) / float64(g.Decode.KVSlots)
		used := e.dSlots * m.sc.InputTokens
		for _, r := range e.running {
			used += r.generated
		}
		s.UsedTokens = used
		if e.stepping {
			s.GenThroughput = float64(len(e.running)) / g.Decode.Step(len(e.running)).Seconds()
		} else {
			s.GenThroughput = 0
		}
	}
}

// errDown is returned for an instance whose process is down.
var errDown = fmt.Errorf("instance is down")

// Exposition appends the named instance's /metrics body as of Now.
func (m *Model) Exposition(name string, dst []byte) ([]byte, Format, error) {
	in := m.byName[name]
	if g := m.routerOf(name); in == nil && g != nil {
		return m.routerExposition(g, dst)
	}
	if in == nil {
		return dst, nil, fmt.Errorf("unknown instance %q", name)
	}
	if in.down {
		return dst, in.formatter, fmt.Errorf("%s: %w", name, errDown)
	}
	m.refresh(in)
	v := InstanceView{
		Name: in.name, Role: in.role, Model: in.grp.spec.ModelOf(m.sc), Connector: in.grp.spec.Connector,
		Group: in.grp.spec, Asleep: in.asleep,
	}
	var buf [8]*EngineStats
	v.Engines = buf[:0]
	for _, e := range in.engines {
		v.Engines = append(v.Engines, e.stats)
	}
	return in.formatter.Render(dst, &v), in.formatter, nil
}

// InstanceInfo describes one simulated instance.
type InstanceInfo struct {
	Name, Role, Engine, Connector string
	Engines                       int // DP engines behind the endpoint
}

// Instances lists the instances in creation order.
func (m *Model) Instances() []InstanceInfo {
	out := make([]InstanceInfo, 0, len(m.instances))
	for _, in := range m.instances {
		out = append(out, InstanceInfo{in.name, in.role, in.grp.spec.Engine, in.grp.spec.Connector, len(in.engines)})
	}
	return append(out, m.routerInfos()...)
}

// Down reports whether the named instance's process is currently down.
func (m *Model) Down(name string) bool {
	in := m.byName[name]
	return in != nil && in.down
}

// StageState sums queue gauges and busy time over all engines of a role; it
// is what the bottleneck tests (and curious users) look at.
type StageState struct {
	At time.Duration

	PrefillWaiting int // waiting for prefill compute
	PrefillRunning int
	Bootstrap      int // SGLang: waiting for decode pre-allocation
	Inflight       int // prefilled, KV not yet sent (incl. on the wire)
	Prealloc       int // decode: waiting for a KV slot
	Receiving      int // decode: slot held, KV not yet arrived
	DecodeWaiting  int // decode: KV arrived, not yet in the batch
	DecodeRunning  int

	// Cumulative busy time summed over engines: prefill computing, transfer
	// threads busy divided by thread count, decode batch occupancy
	// (running/max_batch per step). Divide a difference by Δt × engines.
	PrefillBusy, TransferBusy, DecodeBusy time.Duration
	PrefillEngines, DecodeEngines         int
	Dropped                               uint64
	// DecodeTokens are the tokens decode generated, cumulative.
	DecodeTokens uint64
}

// State returns the current StageState.
func (m *Model) State() StageState {
	st := StageState{At: time.Duration(m.now), Dropped: m.dropped}
	for _, g := range m.groups {
		for _, e := range g.prefill {
			st.PrefillEngines++
			st.PrefillWaiting += len(e.waiting)
			st.PrefillRunning += len(e.batch)
			st.Bootstrap += len(e.bootstrap)
			st.Inflight += e.inflight
			st.PrefillBusy += time.Duration(e.busyNs)
			st.TransferBusy += time.Duration(e.xferBusyNs / int64(len(e.threadBusy)))
		}
		for _, e := range g.decode {
			st.DecodeEngines++
			st.Prealloc += len(e.prealloc)
			st.Receiving += len(e.receiving)
			st.DecodeWaiting += len(e.ready)
			st.DecodeRunning += len(e.running)
			st.DecodeBusy += time.Duration(e.occNs)
			st.DecodeTokens += e.stats.GenTokens
		}
	}
	return st
}
