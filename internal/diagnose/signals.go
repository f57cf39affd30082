package diagnose

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/ledger"
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
		if tr, ok := fit(collect(w, func(p *ledger.Point) ledger.Num { return *ownW(p) })); ok && tr.Rise >= g.up-g.own {
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
	pKVFull     bool
	pKVUsage    float64
	notes       []string
}

func measure(w []ledger.Point, th Thresholds) signals {
	var s signals
	minN := 5
	s.kvPrefill = compare(w,
		func(p *ledger.Point) *ledger.Num { return &p.Prefill.Instant },
		func(p *ledger.Point) *ledger.Num { return &p.KV.Instant },
		func(p *ledger.Point) *ledger.Num { return &p.Prefill.Window },
		func(p *ledger.Point) *ledger.Num { return &p.KV.Window }, minN, th)
	s.decodeKV = compare(w,
		func(p *ledger.Point) *ledger.Num { return &p.KV.Instant },
		func(p *ledger.Point) *ledger.Num { return &p.Decode.Instant },
		func(p *ledger.Point) *ledger.Num { return &p.KV.Window },
		func(p *ledger.Point) *ledger.Num { return &p.Decode.Window }, minN, th)
	pr := collect(w, func(p *ledger.Point) ledger.Num { return p.Prefill.Instant })
	kv := collect(w, func(p *ledger.Point) ledger.Num { return p.KV.Instant })
	if pr.n() > 0 {
		s.prefillRPS = pr.mean()
	}
	if kv.n() >= minN {
		s.kvKnown, s.kvRPS = true, kv.mean()
	} else {
		s.notes = append(s.notes, "KV req/s absent ("+lastWhy(w, func(p *ledger.Point) ledger.Num { return p.KV.Instant })+"): KV judged by its queues only")
	}

	mk := func(name string, get func(*ledger.Point) ledger.Num) queue {
		q := queue{name: name}
		q.tr, q.ok = fit(collect(w, get))
		q.grow = q.ok && q.tr.growing(th)
		return q
	}
	s.pWait = mk("prefill waiting", func(p *ledger.Point) ledger.Num { return p.Prefill.Waiting })
	s.dWait = mk("decode waiting", func(p *ledger.Point) ledger.Num { return p.Decode.Waiting })
	s.boot = mk("prefill bootstrap queue", func(p *ledger.Point) ledger.Num { return p.Prefill.Queues.Bootstrap })
	s.infl = mk("prefill inflight queue", func(p *ledger.Point) ledger.Num { return p.Prefill.Queues.Inflight })
	s.prea = mk("decode prealloc queue", func(p *ledger.Point) ledger.Num { return p.Decode.Queues.Prealloc })
	s.xfer = mk("decode transfer queue", func(p *ledger.Point) ledger.Num { return p.Decode.Queues.Transfer })

	// Little's law: level ÷ throughput is how long a request sits in the
	// queue. A full queue stops growing, yet still says who is slow.
	if s.infl.ok {
		rate := s.prefillRPS
		if s.kvKnown {
			rate = s.kvRPS
		}
		if rate > 0 {
			s.inflSeconds = s.infl.tr.Level / rate
		}
		s.inflHeld = s.infl.tr.Level >= th.HoldMin && s.inflSeconds >= th.HoldSeconds
	}
	if u := collect(w, func(p *ledger.Point) ledger.Num { return p.Prefill.KVUsage }); u.n() > 0 {
		s.pKVUsage = u.tail(3)
		s.pKVFull = s.pKVUsage >= th.KVFull
	}

	last := w[len(w)-1]
	for _, st := range []struct {
		name string
		sp   ledger.StagePoint
	}{{"prefill", last.Prefill}, {"decode", last.Decode}} {
		if st.sp.Partial {
			s.notes = append(s.notes, fmt.Sprintf("%s is partial: %d of %d instances up", st.name, st.sp.Up, st.sp.Instances))
		}
	}
	if last.KV.Partial {
		s.notes = append(s.notes, fmt.Sprintf("KV is partial: %d of %d instances up", last.KV.Up, last.KV.Instances))
	}
	return s
}
