package ledger

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// instanceRead is one target read at one tick: why its values are absent
// ("" when they are not), and the role and engine it counts under.
type instanceRead struct {
	t      *target
	now    time.Time
	window time.Duration
	why    string
	role   engine.Role
	engine engine.Engine
}

func (l *Ledger) read(t *target, now time.Time) instanceRead {
	return instanceRead{t: t, now: now, window: l.cfg.Window, why: l.unavailable(t, now), role: t.effectiveRole(), engine: t.effectiveEngine()}
}

// point is the instance's values at the tick.
func (r *instanceRead) point(name string) InstancePoint {
	ip := InstancePoint{Target: name, Role: string(r.role), Engine: string(r.engine), Up: r.t.up, Sleep: r.sleep()}
	ip.Instant, ip.Window, ip.WindowFrom, ip.WindowTo = r.rates(engine.Completed)
	ip.KVBytes, ip.KVBytesW, _, _ = r.rates(engine.KVBytes)
	ip.PromptTPS = r.windowed(engine.PromptTokens)
	ip.GenTPS = r.windowed(engine.GenerationTokens)
	ip.Running, ip.Waiting, ip.KVUsage = r.gauge(engine.Running), r.gauge(engine.Waiting), r.gauge(engine.KVUsage)
	ip.WaitingDeferred = r.gauge(engine.WaitingDeferred)
	ip.Queues = Queues{
		Bootstrap: r.gauge(engine.QueueBootstrap),
		Inflight:  r.gauge(engine.QueueInflight),
		Prealloc:  r.gauge(engine.QueuePrealloc),
		Transfer:  r.gauge(engine.QueueTransfer),
	}
	return ip
}

// sleep is the instance's sleep state when none of its engines is awake
// (vLLM's engine_sleep_state), "" when one is or the engine does not say.
// Engines asleep at both levels read as the deeper one.
func (r *instanceRead) sleep() string {
	if awake := r.gauge(engine.EnginesAwake); !awake.OK() || awake.V > 0 {
		return ""
	}
	switch {
	case r.gauge(engine.EnginesDiscardAll).V > 0:
		return SleepDiscardAll
	case r.gauge(engine.EnginesWeightsOffloaded).V > 0:
		return SleepWeightsOffloaded
	}
	return SleepPaused
}

// gauge is gauge m in the newest sample.
func (r *instanceRead) gauge(m engine.Metric) Num {
	if r.why != "" {
		return Absent(r.why)
	}
	s := r.t.at(0)
	if s.nonFiniteGauge[m.GaugeIndex()] {
		return Absent(whyNonFinite)
	}
	if !s.hasGauge[m.GaugeIndex()] {
		return Absent("no " + m.String() + " gauge in the exposition")
	}
	return Val(s.gauges[m.GaugeIndex()])
}

// rates are counter m's instant and windowed rates, with the times of the
// window's first and last samples.
func (r *instanceRead) rates(m engine.Metric) (instant, windowed Num, from, to time.Time) {
	if r.why != "" {
		return Absent(r.why), Absent(r.why), time.Time{}, time.Time{}
	}
	windowed, from, to = r.t.windowed(m, r.now, r.window)
	return r.t.instant(m), windowed, from, to
}

// windowed is counter m's windowed rate.
func (r *instanceRead) windowed(m engine.Metric) Num {
	if r.why != "" {
		return Absent(r.why)
	}
	w, _, _ := r.t.windowed(m, r.now, r.window)
	return w
}
