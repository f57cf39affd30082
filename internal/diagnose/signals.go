package diagnose

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/saturation"
)

// gap compares a stage's rate with the rate feeding it.
type gap struct {
	known     bool    // both rates present often enough to compare
	up, own   float64 // mean instant rates over paired ticks
	below     float64 // fraction of ticks (windowed rates) with own < up
	span      float64
	shortfall bool
	catching  bool // below, but rising toward the feeder
}

func (g gap) rel() float64 {
	if g.up <= 0 {
		return 0
	}
	return (g.up - g.own) / g.up
}

// compare pairs the two stages tick by tick so that an absence on one side
// does not bias the other side's mean.
func compare(w []ledger.Point, up, own func(*ledger.Point) *ledger.Num, upW, ownW func(*ledger.Point) *ledger.Num, minN int, th Thresholds) gap {
	var g gap
	var n, nw, below int
	var sumUp, sumOwn float64
	var t0, t1 = -1.0, 0.0
	for i := range w {
		p := &w[i]
		// A sum missing some of its instances (a failed scrape, a restart)
		// is not comparable with a complete one.
		if p.Prefill.Partial || p.KV.Partial || p.Decode.Partial {
			continue
		}
		if u, o := up(p), own(p); u.OK() && o.OK() {
			n++
			sumUp += u.V
			sumOwn += o.V
			ts := p.Time.Sub(w[0].Time).Seconds()
			if t0 < 0 {
				t0 = ts
			}
			t1 = ts
		}
		if u, o := upW(p), ownW(p); u.OK() && o.OK() {
			nw++
			if o.V < u.V {
				below++
			}
		}
	}
	if n < minN || nw == 0 {
		return g
	}
	g.known = true
	g.up, g.own = sumUp/float64(n), sumOwn/float64(n)
	g.below = float64(below) / float64(nw)
	g.span = t1 - t0
	g.shortfall = g.rel() >= th.RateGap && g.up-g.own >= th.RateGapAbs && g.below >= th.Persist
	// A stage still ramping up toward its feeder is catching up, not
	// limiting: its windowed rate rose over the window by at least the gap.
	if g.shortfall {
		if tr, ok := fit(collect(w, func(p *ledger.Point) ledger.Num { return *ownW(p) }).sinceGap()); ok && tr.Rise >= g.up-g.own {
			g.shortfall, g.catching = false, true
		}
	}
	return g
}

func (g gap) text(ownName, upName string) string {
	return fmt.Sprintf("%s %.1f req/s < %s %.1f req/s (−%.0f%%) for %.0f s, below in %.0f%% of ticks",
		ownName, g.own, upName, g.up, 100*g.rel(), g.span, 100*g.below)
}

// queue is one hand-off queue's trend.
type queue struct {
	name string
	tr   trend
	ok   bool
	grow bool
}

func (q queue) text() string {
	return fmt.Sprintf("%s %+.2g/s (%.0f → %.0f)", q.name, q.tr.Slope, max(q.tr.From, 0), max(q.tr.To, 0))
}

// signals are everything the rules look at.
type signals struct {
	kvPrefill  gap // KV req/s against prefill req/s
	decodeKV   gap // decode req/s against KV req/s
	prefillRPS float64
	kvRPS      float64
	kvKnown    bool

	pWait, dWait, boot, infl, prea, xfer queue

	inflHeld    bool    // inflight queue holds ≥ HoldSeconds of KV throughput
	inflSeconds float64 // its level ÷ the KV rate
	inflLevel   float64 // its lower quartile over the window
	pKVFull     bool
	pKVUsage    float64
	// Prefill KV cache filling up: prefilled requests accumulate on
	// prefill, waiting for their KV to leave.
	pKVGrow bool
	pKVTr   trend
	// Decode waiting persistently holds ≥ HoldSeconds of decode throughput.
	dWaitHeld    bool
	dWaitSeconds float64
	copySecs     float64 // median KV copy time, 0 when not exported
	// Prefill waiting that persistently holds ≥ HoldSeconds of prefill
	// throughput: requests sit in front of prefill compute.
	pWaitHeld    bool
	pWaitSeconds float64
	pWaitLevel   float64 // its lower quartile over the window
	// Decode instances whose running batch is pinned at a constant level
	// (their batch limit) over the newest PinSeconds, of those reporting.
	dPinned, dReporting int
	dRunning            float64
	dWaitLevel          float64 // decode waiting, lower quartile over the window
	// Decode's waiting by reason (vLLM), where its instances say: those
	// waiting for capacity (KV blocks or the batch) as a queue, and those
	// deferred while their KV arrives, their level and the seconds of KV
	// throughput it holds (Little's law).
	dByReason     bool
	dCap          queue
	dCapHeld      bool
	dCapLevel     float64
	dDeferred     float64
	dDeferredSecs float64
	dKVUsage      float64
	dKVFull       bool
	// Deployment facts (see deployment).
	bytesSkew    bool
	bytesPerXfer float64
	notes        []string
	traffic      []string
}

func measure(w []ledger.Point, th Thresholds) signals {
	var s signals
	minN := 5
	s.kvPrefill = compare(w,
		func(p *ledger.Point) *ledger.Num { return &p.Prefill.Window },
		func(p *ledger.Point) *ledger.Num { return &p.KV.Window },
		func(p *ledger.Point) *ledger.Num { return &p.Prefill.Window },
		func(p *ledger.Point) *ledger.Num { return &p.KV.Window }, minN, th)
	s.decodeKV = compare(w,
		func(p *ledger.Point) *ledger.Num { return &p.KV.Window },
		func(p *ledger.Point) *ledger.Num { return &p.Decode.Window },
		func(p *ledger.Point) *ledger.Num { return &p.KV.Window },
		func(p *ledger.Point) *ledger.Num { return &p.Decode.Window }, minN, th)
	if n := decodeOnly(w, minN, th); n != "" {
		s.traffic = append(s.traffic, n)
	}
	pr := collect(w, func(p *ledger.Point) ledger.Num { return p.Prefill.Window })
	kv := collect(w, func(p *ledger.Point) ledger.Num { return p.KV.Window })
	if pr.n() > 0 {
		s.prefillRPS = pr.mean()
	}
	if kv.n() >= minN {
		s.kvKnown, s.kvRPS = true, kv.mean()
	} else {
		s.notes = append(s.notes, "KV req/s absent ("+lastWhy(w, func(p *ledger.Point) ledger.Num { return p.KV.Instant })+"): KV judged by its queues only")
	}

	// A queue must grow by a meaningful share of the traffic (MinGrowth of
	// the prefill rate): slower growth is noise or barely matters.
	minSlope := max(th.MinSlope, th.MinGrowth*s.prefillRPS)
	mk := func(name string, get func(*ledger.Point) ledger.Num) queue {
		q := queue{name: name}
		q.tr, q.ok = fit(collect(w, get).sinceGap())
		q.grow = q.ok && q.tr.growing(th) && q.tr.Slope >= minSlope
		return q
	}
	s.pWait = mk("prefill waiting", func(p *ledger.Point) ledger.Num { return p.Prefill.Waiting })
	s.dWait = mk("decode waiting", func(p *ledger.Point) ledger.Num { return p.Decode.Waiting })
	s.boot = mk("prefill bootstrap queue", func(p *ledger.Point) ledger.Num { return p.Prefill.Queues.Bootstrap })
	s.infl = mk("prefill inflight queue", func(p *ledger.Point) ledger.Num { return p.Prefill.Queues.Inflight })
	s.prea = mk("decode prealloc queue", func(p *ledger.Point) ledger.Num { return p.Decode.Queues.Prealloc })
	s.xfer = mk("decode transfer queue", func(p *ledger.Point) ledger.Num { return p.Decode.Queues.Transfer })

	// Little's law: level ÷ throughput is how long a request sits in the
	// queue. A full queue stops growing, yet still says who is slow. The
	// level is the window's lower quartile, so only a queue that stays
	// full counts; a burst that drains does not.
	// service is the time a request spends in the queue without waiting
	// for anyone (a KV copy is in the inflight and decode transfer queues
	// while it runs): only the time beyond it is queueing.
	// The level is returned with the seconds, for the evidence to state the
	// count the seconds come from (not the trend fit's end).
	held := func(q queue, get func(*ledger.Point) ledger.Num, rate, service float64) (bool, float64, float64) {
		if !q.ok || rate <= 0 {
			return false, 0, 0
		}
		lvl := collect(w, get).quantile(0.25)
		secs := lvl / rate
		return lvl >= th.HoldMin && secs-service >= th.HoldSeconds, secs, lvl
	}
	// The median KV copy time (the connector's transfer-time histogram).
	copySecs := collect(w, func(p *ledger.Point) ledger.Num { return p.KV.XferTime.P50 }).quantile(0.5)
	s.copySecs = copySecs
	kvRate := s.prefillRPS
	if s.kvKnown {
		kvRate = s.kvRPS
	}
	s.inflHeld, s.inflSeconds, s.inflLevel = held(s.infl, func(p *ledger.Point) ledger.Num { return p.Prefill.Queues.Inflight }, kvRate, copySecs)
	s.pWaitHeld, s.pWaitSeconds, s.pWaitLevel = held(s.pWait, func(p *ledger.Point) ledger.Num { return p.Prefill.Waiting }, s.prefillRPS, 0)
	if u := collect(w, func(p *ledger.Point) ledger.Num { return p.Prefill.KVUsage }); u.n() > 0 {
		s.pKVUsage = u.quantile(0.25)
		s.pKVFull = s.pKVUsage >= th.KVFull
	}
	s.dPinned, s.dReporting, s.dRunning = pinned(w)
	if tr, ok := fit(collect(w, func(p *ledger.Point) ledger.Num { return p.Prefill.KVUsage }).sinceGap()); ok {
		s.pKVTr = tr
		s.pKVGrow = tr.Slope > 0 && tr.Rise >= th.KVRise && tr.Rise >= 2*tr.Resid && tr.persists()
	}
	decodeRPS := 0.0
	if d := collect(w, func(p *ledger.Point) ledger.Num { return p.Decode.Window }); d.n() > 0 {
		decodeRPS = d.mean()
	}
	s.dWaitHeld, s.dWaitSeconds, _ = held(s.dWait, func(p *ledger.Point) ledger.Num { return p.Decode.Waiting }, decodeRPS, copySecs)
	s.dWaitLevel = collect(w, func(p *ledger.Point) ledger.Num { return p.Decode.Waiting }).quantile(0.25)

	measureReasons(&s, w, th, mk, held, kvRate)

	last := w[len(w)-1]
	for _, st := range []struct {
		name string
		sp   ledger.StagePoint
	}{{"prefill", last.Prefill}, {"decode", last.Decode}} {
		if st.sp.Partial {
			s.notes = append(s.notes, fmt.Sprintf("%s is partial: %d of %d instances up", st.name, st.sp.Up, st.sp.Instances))
		}
		if n := len(st.sp.Asleep); n > 0 {
			s.notes = append(s.notes, fmt.Sprintf("%s: %d instance(s) asleep (sleep mode), not counted among its %d serving: %s",
				st.name, n, st.sp.Instances, strings.Join(st.sp.Asleep, ", ")))
		}
	}
	if last.KV.Partial {
		s.notes = append(s.notes, fmt.Sprintf("KV is partial: %d of %d instances up", last.KV.Up, last.KV.Instances))
	}
	return s
}

// PinSeconds is how far back a decode batch must have stayed at one level
// to count as pinned at its limit.
const PinSeconds = saturation.PinSeconds

// pinned counts the decode instances whose running batch is pinned at its
// limit over the newest PinSeconds by saturation.Pinned, the rule the
// advisor shares, of those reporting enough samples; level sums the
// pinned instances' levels and the others' newest batch. Without
// per-instance entries the decode sum stands for one instance.
func pinned(w []ledger.Point) (n, reporting int, level float64) {
	newest := w[len(w)-1].Time
	per := map[string][]float64{}
	var order []string
	for i := range w {
		if newest.Sub(w[i].Time).Seconds() > PinSeconds {
			continue
		}
		add := func(name string, v ledger.Num) {
			if !v.OK() {
				return
			}
			if _, ok := per[name]; !ok {
				order = append(order, name)
			}
			per[name] = append(per[name], v.V)
		}
		if len(w[i].Instances) == 0 {
			add("", w[i].Decode.Running)
			continue
		}
		for j := range w[i].Instances {
			// An instance asleep runs nothing on purpose: not a batch
			// with room.
			if ip := &w[i].Instances[j]; ip.Role == "decode" && ip.Sleep == "" {
				add(ip.Target, ip.Running)
			}
		}
	}
	for _, name := range order {
		vs := per[name]
		if len(vs) < saturation.MinSamples {
			continue
		}
		reporting++
		if ok, hi := saturation.Pinned(vs); ok {
			n++
			level += hi
		} else {
			level += vs[len(vs)-1]
		}
	}
	return n, reporting, level
}

// decodeOnly notes decode completing more than prefill: with conditional
// disaggregation short prompts skip remote prefill (decode prefills them
// itself), so decode req/s counts every request and prefill req/s only the
// remote prefills (docs/pools.md#decode-only-requests). That is served
// traffic, never a fault; the note gives the evidence.
func decodeOnly(w []ledger.Point, minN int, th Thresholds) string {
	if n := routerDecisions(w, minN); n != "" {
		return n
	}
	g := compare(w,
		func(p *ledger.Point) *ledger.Num { return &p.Decode.Window },
		func(p *ledger.Point) *ledger.Num { return &p.Prefill.Window },
		func(p *ledger.Point) *ledger.Num { return &p.Decode.Window },
		func(p *ledger.Point) *ledger.Num { return &p.Prefill.Window }, minN, th)
	if !g.known || g.rel() < th.RateGap || g.up-g.own < th.RateGapAbs || g.below < th.Persist {
		return ""
	}
	return fmt.Sprintf("decode completes %.1f req/s, prefill %.1f req/s: %.1f req/s (%.0f%%) are served without remote prefill (decode-only or locally prefilled requests), which is not a fault",
		g.up, g.own, g.up-g.own, 100*g.rel())
}

// routerDecisions notes the router's own count of the requests it sent
// straight to decode, where it exports its P/D decision (llm-d's
// disagg_decision_total): what decode > prefill infers, measured.
func routerDecisions(w []ledger.Point, minN int) string {
	only := collect(w, func(p *ledger.Point) ledger.Num { return p.Router.DecodeOnly })
	remote := collect(w, func(p *ledger.Point) ledger.Num { return p.Router.RemotePrefill })
	if only.n() < minN || remote.n() < minN {
		return ""
	}
	d, r := only.mean(), remote.mean()
	if d <= 0 || d+r <= 0 {
		return ""
	}
	return fmt.Sprintf("the router sent %.1f req/s straight to decode and %.1f req/s to remote prefill: %.0f%% are served without remote prefill by its P/D decisions, which is not a fault",
		d, r, 100*d/(d+r))
}

// measureReasons fills decode's waiting by reason where its instances
// export it (vLLM's num_requests_waiting_by_reason) in enough points.
func measureReasons(s *signals, w []ledger.Point, th Thresholds, mk func(string, func(*ledger.Point) ledger.Num) queue,
	held func(queue, func(*ledger.Point) ledger.Num, float64, float64) (bool, float64, float64), kvRate float64) {
	capOf := func(p *ledger.Point) ledger.Num { return p.Decode.WaitingBy.Capacity }
	deferredOf := func(p *ledger.Point) ledger.Num { return p.Decode.WaitingBy.Deferred }
	if collect(w, capOf).n() < 5 || collect(w, deferredOf).n() < 5 {
		return
	}
	s.dByReason = true
	s.dCap = mk("decode waiting for capacity", capOf)
	decodeRPS := 0.0
	if d := collect(w, func(p *ledger.Point) ledger.Num { return p.Decode.Window }); d.n() > 0 {
		decodeRPS = d.mean()
	}
	s.dCapHeld, _, s.dCapLevel = held(s.dCap, capOf, decodeRPS, 0)
	s.dDeferred = collect(w, deferredOf).quantile(0.25)
	if kvRate > 0 {
		s.dDeferredSecs = s.dDeferred / kvRate
	}
	if u := collect(w, func(p *ledger.Point) ledger.Num { return p.Decode.KVUsage }); u.n() > 0 {
		s.dKVUsage = u.quantile(0.25)
		s.dKVFull = s.dKVUsage >= th.KVFull
	}
}
