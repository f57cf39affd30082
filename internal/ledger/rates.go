package ledger

import (
	"fmt"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// unavailable says why a target has no current values, or "" when it has.
func (l *Ledger) unavailable(t *target, now time.Time) string {
	switch {
	case t.n == 0 && t.lastErr != "":
		return "down: " + t.lastErr
	case t.n == 0:
		return "no successful scrape yet"
	case !t.up:
		return "down: " + t.lastErr
	}
	if age := now.Sub(t.at(0).t); age > l.cfg.StaleAfter {
		return fmt.Sprintf("stale: newest sample is %.1fs old", age.Seconds())
	}
	return ""
}

// instant is Δ/Δt between the two newest samples (PromQL irate).
func (t *target) instant(m engine.Metric) Num {
	if t.n < 2 {
		return Absent("one sample so far; a rate needs two")
	}
	a, b := t.at(1), t.at(0)
	if a.nonFinite[m] || b.nonFinite[m] {
		return Absent(whyNonFinite)
	}
	if !a.hasTotal[m] || !b.hasTotal[m] {
		return Absent("no " + m.String() + " counter in the exposition")
	}
	dt := b.t.Sub(a.t).Seconds()
	if dt <= 0 {
		return Absent("samples without time between them")
	}
	return Val((b.totals[m] - a.totals[m]) / dt)
}

// span returns the oldest and newest samples inside (now-W, now] that pass ok.
func (t *target) span(now time.Time, w time.Duration, ok func(*sample) bool) (first, last *sample) {
	from := now.Add(-w)
	for i := 0; i < t.n; i++ {
		s := t.at(i)
		if s.t.After(now) {
			continue
		}
		if !s.t.After(from) {
			break
		}
		if !ok(s) {
			continue
		}
		if last == nil {
			last = s
		}
		first = s
	}
	return first, last
}

// windowed is the increase between the first and last samples inside W,
// divided by their real time difference; no extrapolation.
func (t *target) windowed(m engine.Metric, now time.Time, w time.Duration) (Num, time.Time, time.Time) {
	if t.n > 0 && t.at(0).nonFinite[m] {
		return Absent(whyNonFinite), time.Time{}, time.Time{}
	}
	first, last := t.span(now, w, func(s *sample) bool { return s.hasTotal[m] && !s.nonFinite[m] })
	if first == nil {
		if t.n > 0 && !t.at(0).hasTotal[m] {
			return Absent("no " + m.String() + " counter in the exposition"), time.Time{}, time.Time{}
		}
		return Absent("no sample inside the window"), time.Time{}, time.Time{}
	}
	if first == last {
		return Absent("one sample inside the window; a rate needs two"), time.Time{}, time.Time{}
	}
	dt := last.t.Sub(first.t).Seconds()
	return Val((last.totals[m] - first.totals[m]) / dt), first.t, last.t
}

// histIncrease adds t's histogram increase over the window to acc.
func (t *target) histIncrease(h int, now time.Time, w time.Duration, acc *merged) {
	if p, ok := t.histWindow(h, now, w); ok {
		acc.add(p.bounds, p.counts)
	}
}

// histWindow is t's histogram increase between the first and last samples
// inside the window, absent when the bounds changed in between.
func (t *target) histWindow(h int, now time.Time, w time.Duration) (histPart, bool) {
	first, last := t.span(now, w, func(s *sample) bool { return s.hists[h].present })
	if first == nil || first == last || &first.hists[h].bounds[0] != &last.hists[h].bounds[0] {
		return histPart{}, false
	}
	a, b := &first.hists[h], &last.hists[h]
	inc := make([]float64, len(b.counts))
	for i := range inc {
		inc[i] = b.counts[i] - a.counts[i]
	}
	return histPart{bounds: b.bounds, counts: inc, sum: b.sum - a.sum, count: b.count - a.count, seconds: last.t.Sub(first.t).Seconds()}, true
}

func quant(acc *merged, what string) Quant {
	bounds, counts := acc.sum()
	n := len(counts)
	if n == 0 {
		return Quant{Absent("no " + what + " histogram"), Absent("no " + what + " histogram"), Absent("no " + what + " histogram")}
	}
	if counts[n-1] <= 0 {
		why := "no " + what + " observations in the window"
		return Quant{Absent(why), Absent(why), Absent(why)}
	}
	q := func(p float64) Num {
		v, ok := quantile(p, bounds, counts)
		if !ok {
			return Absent(what + " histogram has no +Inf bucket")
		}
		return Val(v)
	}
	return Quant{q(0.5), q(0.9), q(0.99)}
}

// sum adds present values; with some absent it reports which.
type sum struct {
	v       float64
	n       int
	reasons []string
}

func (s *sum) add(x Num) {
	if x.OK() {
		s.v += x.V
		s.n++
		return
	}
	s.reasons = append(s.reasons, x.Why)
}

func (s *sum) num(none string) Num {
	if s.n > 0 {
		return Val(s.v)
	}
	if len(s.reasons) > 0 {
		return Absent(s.reasons[0])
	}
	return Absent(none)
}

func (l *Ledger) compute(now time.Time) Point {
	p := Point{Time: now}
	w := l.cfg.Window
	var stages [2]struct {
		rate, rateW, running, waiting, usage, ptps, gtps sum
		queues                                           [4]sum
		hists                                            [3]merged
		instances, up                                    int
		missing                                          []string
	}
	var kv struct {
		bytes, bytesW, xfers, fails sum
		instances, up               int
		missing                     []string
		hist                        merged
	}
	var notes []string
	queueGauges := [4]engine.Metric{engine.QueueBootstrap, engine.QueueInflight, engine.QueuePrealloc, engine.QueueTransfer}
	stageHists := [3]engine.Metric{engine.TTFT, engine.ITL, engine.E2E}
	kvTotal := l.removedKV

	for _, name := range l.names {
		t := l.targets[name]
		kvTotal += t.totals[engine.KVBytes]
		notes = append(notes, t.notes...)
		role := t.effectiveRole()
		eng := t.info.Engine
		if eng == engine.EngineAuto {
			eng = t.engine
		}
		ip := InstancePoint{Target: name, Role: string(role), Engine: string(eng), Up: t.up}
		why := l.unavailable(t, now)
		gauge := func(m engine.Metric) Num {
			if why != "" {
				return Absent(why)
			}
			s := t.at(0)
			if s.nonFiniteGauge[m.GaugeIndex()] {
				return Absent(whyNonFinite)
			}
			if !s.hasGauge[m.GaugeIndex()] {
				return Absent("no " + m.String() + " gauge in the exposition")
			}
			return Val(s.gauges[m.GaugeIndex()])
		}
		rate := func(m engine.Metric) (Num, Num) {
			if why != "" {
				return Absent(why), Absent(why)
			}
			rw, from, to := t.windowed(m, now, w)
			if m == engine.Completed {
				ip.WindowFrom, ip.WindowTo = from, to
			}
			return t.instant(m), rw
		}
		ip.Instant, ip.Window = rate(engine.Completed)
		ip.KVBytes, ip.KVBytesW = rate(engine.KVBytes)
		_, ip.PromptTPS = rate(engine.PromptTokens)
		_, ip.GenTPS = rate(engine.GenerationTokens)
		ip.Running, ip.Waiting, ip.KVUsage = gauge(engine.Running), gauge(engine.Waiting), gauge(engine.KVUsage)
		ip.Queues = Queues{gauge(engine.QueueBootstrap), gauge(engine.QueueInflight), gauge(engine.QueuePrealloc), gauge(engine.QueueTransfer)}
		p.Instances = append(p.Instances, ip)

		if t.has(engine.KVBytes) {
			kv.instances++
			if why == "" {
				kv.up++
			}
			if !ip.KVBytesW.OK() {
				kv.missing = append(kv.missing, name)
			}
			kv.bytes.add(ip.KVBytes)
			kv.bytesW.add(ip.KVBytesW)
			if why == "" {
				_, xw := rate(engine.KVTransfers)
				kv.xfers.add(xw)
				_, fw := rate(engine.KVFailures)
				kv.fails.add(fw)
				t.histIncrease(engine.KVXferTime.HistogramIndex(), now, w, &kv.hist)
			}
		}
		si := -1
		switch role {
		case engine.Prefill:
			si = 0
		case engine.Decode:
			si = 1
		}
		if si < 0 {
			continue
		}
		st := &stages[si]
		st.instances++
		if why == "" {
			st.up++
		}
		// Down, stale, or up without a usable completion counter: the
		// stage's sum leaves the instance out and says so.
		if !ip.Window.OK() {
			st.missing = append(st.missing, name)
		}
		st.rate.add(ip.Instant)
		st.rateW.add(ip.Window)
		st.running.add(ip.Running)
		st.waiting.add(ip.Waiting)
		st.usage.add(ip.KVUsage)
		st.ptps.add(ip.PromptTPS)
		st.gtps.add(ip.GenTPS)
		for i, m := range queueGauges {
			st.queues[i].add(gauge(m))
		}
		if why == "" {
			for i, m := range stageHists {
				t.histIncrease(m.HistogramIndex(), now, w, &st.hists[i])
			}
		}
	}

	for i, sp := range []*StagePoint{&p.Prefill, &p.Decode} {
		st := &stages[i]
		none := "no " + []string{"prefill", "decode"}[i] + " instance configured"
		sp.Instances, sp.Up, sp.Missing = st.instances, st.up, st.missing
		sp.Partial = st.rateW.n > 0 && len(st.missing) > 0
		sp.Instant, sp.Window = st.rate.num(none), st.rateW.num(none)
		sp.Running, sp.Waiting = st.running.num(none), st.waiting.num(none)
		if st.usage.n > 0 {
			sp.KVUsage = Val(st.usage.v / float64(st.usage.n))
		} else {
			sp.KVUsage = st.usage.num(none)
		}
		sp.PromptTPS, sp.GenTPS = st.ptps.num(none), st.gtps.num(none)
		sp.Queues = Queues{st.queues[0].num(none), st.queues[1].num(none), st.queues[2].num(none), st.queues[3].num(none)}
		sp.TTFT = quant(&st.hists[0], "TTFT")
		sp.ITL = quant(&st.hists[1], "ITL")
		sp.E2E = quant(&st.hists[2], "E2E")
	}

	noKV := "no target exports a KV byte counter (" + engine.KVSourceDisplays() + ")"
	if len(notes) > 0 {
		noKV += "; " + strings.Join(dedupe(notes), "; ")
	}
	p.KV.Instances, p.KV.Up, p.KV.Missing = kv.instances, kv.up, kv.missing
	p.KV.Partial = kv.bytesW.n > 0 && len(kv.missing) > 0
	p.KV.BytesInstant, p.KV.BytesWindow = kv.bytes.num(noKV), kv.bytesW.num(noKV)
	p.KV.Transfers, p.KV.Failures = kv.xfers.num(noKV), kv.fails.num(noKV)
	p.KV.Instant = l.perRequest(p.KV.BytesInstant)
	p.KV.Window = l.perRequest(p.KV.BytesWindow)
	p.KV.XferTime = quant(&kv.hist, "KV transfer time")
	if l.sawKV {
		p.GlobalKVBytes = Val(kvTotal)
	} else {
		p.GlobalKVBytes = Absent(noKV)
	}
	return p
}

func (l *Ledger) perRequest(bytes Num) Num {
	if !bytes.OK() {
		return bytes
	}
	if l.cfg.KVRequest.Bytes <= 0 {
		return Absent("B_request is not set (-kv-bytes-per-request, or -model-config with -seq-len)")
	}
	return Val(bytes.V / float64(l.cfg.KVRequest.Bytes))
}

func dedupe(s []string) []string {
	out := s[:0]
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
