// Package diagnose names the stage that limits a P/D deployment
// (docs/design.md#the-bottleneck-verdict, docs/web.md#the-verdict),
// as a pure function of the ledger's recent points: a stage whose upstream
// queue grows while its own rate stays below the rate feeding it is the
// bottleneck. Every verdict carries the numbers it rests on.
package diagnose

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Class is what a verdict says: which stage limits the deployment, or why
// no one stage is named. A class that names a stage has the stage's name
// (package stage); the API and the exported metrics write it under "stage".
type Class string

// The verdict classes; the bound ones upstream to downstream.
const (
	Insufficient   Class = "insufficient" // not enough data to say
	Balanced       Class = "balanced"
	PrefillBound         = Class(stage.Prefill)
	KVBound              = Class(stage.KV)
	AdmissionBound Class = "admission" // decode pre-allocation (SGLang bootstrap/prealloc), a part of decode
	DecodeBound          = Class(stage.Decode)
	Mixed          Class = "mixed" // groups are limited by different stages
)

// Classes lists every class, for exporters that want a stable set.
var Classes = []Class{Insufficient, Balanced, PrefillBound, KVBound, AdmissionBound, DecodeBound, Mixed}

// Verdict is the diagnosis at the newest point.
type Verdict struct {
	Class    Class    `json:"stage"`
	Headline string   `json:"headline"`
	Evidence []string `json:"evidence,omitempty"`
	// Notes are caveats: inputs that were absent, stages running partial.
	Notes []string `json:"notes,omitempty"`
	// Traffic says what the traffic is where it explains the rates
	// (requests served without remote prefill): neither a caveat nor
	// evidence. A deployment of several groups leaves it to each group's.
	Traffic []string  `json:"traffic,omitempty"`
	Window  float64   `json:"window_seconds"` // span of the points used
	Samples int       `json:"samples"`
	At      time.Time `json:"at,omitzero"`
	// Groups are the verdicts of each group of instances; the deployment's
	// verdict above summarises them.
	Groups []GroupVerdict `json:"groups,omitempty"`
}

// Thresholds separate a trend from noise. The defaults suit a 1 s interval
// and Poisson-like traffic of a few requests per second or more.
type Thresholds struct {
	// MinSlope (requests/s) and MinRise (requests over the window) a queue's
	// least-squares line must reach to count as growing.
	MinSlope, MinRise float64
	// RateGap is the relative shortfall (0.08 = 8%) and RateGapAbs the
	// absolute one (req/s) by which a stage's mean rate must trail its
	// feeder's, in at least Persist of the ticks (windowed rates), to count.
	RateGap, RateGapAbs, Persist float64
	// HoldSeconds: a hand-off queue holding more than this many seconds of
	// its consumer's throughput (Little's law), and at least HoldMin
	// requests, is backed up even when it no longer grows.
	HoldSeconds, HoldMin float64
	// KVFull is the prefill KV-cache usage above which prefill instances are
	// treated as blocked by their own un-transferred KV.
	KVFull float64
	// BytesSkew is how far (relative) the bytes of one transfer may be
	// from B_request before KV req/s = bytes ÷ B_request stops being a
	// request count (prefix-cache hits, partial transfers).
	BytesSkew float64
	// MinGrowth is the least slope of a growing queue relative to the
	// prefill rate (0.08, as RateGap: a queue growing at 8% of the rate
	// is the same shortfall seen from the other side).
	MinGrowth float64
	// KVRise is how much (as a fraction of the cache) prefill KV-cache
	// usage must climb over the window to count as filling up.
	KVRise float64
}

// Config sets the diagnosis window and thresholds.
type Config struct {
	// Window is how far back the verdict looks (default 30 s). The W of
	// docs/design.md#instant-and-windowed-rates
	// is the rate window (5 s); a queue trend over 5 samples is noise, so
	// the verdict uses the longer of the two.
	Window time.Duration
	// MinSamples is how many points with prefill and decode rates the
	// verdict needs (default 10).
	MinSamples int
	Thresholds Thresholds
}

// DefaultWindow is the verdict's window unless configured.
const DefaultWindow = 30 * time.Second

func (c Config) withDefaults() Config {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MinSamples <= 0 {
		c.MinSamples = 10
	}
	t := &c.Thresholds
	def := func(p *float64, v float64) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&t.MinSlope, 0.05)
	def(&t.MinRise, 3)
	def(&t.RateGap, 0.08)
	def(&t.RateGapAbs, 0.1)
	def(&t.Persist, 0.75)
	def(&t.HoldSeconds, 2)
	def(&t.HoldMin, 8)
	def(&t.KVFull, 0.9)
	def(&t.BytesSkew, 0.1)
	def(&t.KVRise, 0.1)
	def(&t.MinGrowth, 0.08)
	return c
}

// ForRates is c as every reader of the verdict configures it (the live
// API, the recorder, the report): its window, or DefaultWindow, never
// shorter than the rate window w, so that a recorded or reported verdict
// is the live one.
func (c Config) ForRates(w time.Duration) Config {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	c.Window = max(c.Window, w)
	return c
}

// Lookback is how far back of a point the verdict at it reads: two
// windows and one scrape interval, so that a verdict can be held across a
// restart inside the newest window (holdAcrossRestart).
func (c Config) Lookback(interval time.Duration) time.Duration {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	return 2*c.Window + interval
}

// Headline returns the one-line name of a verdict's class.
func Headline(c Class) string {
	switch c {
	case PrefillBound:
		return "Prefill-bound"
	case KVBound:
		return "KV-transfer-bound"
	case AdmissionBound:
		return "Decode admission (pre-allocation) bound"
	case DecodeBound:
		return "Decode-bound"
	case Balanced:
		return "Balanced: no stage is limiting"
	case Mixed:
		return "Groups are limited by different stages"
	default:
		return "Not enough data for a verdict"
	}
}

// Diagnose returns the verdict at the newest of pts (oldest first), looking
// back over the configured window: one verdict per pool the points hold
// (ledger.PoolPoint) and a deployment summary. Points without pools are
// judged as one group. Points older than the window are used
// only to hold a verdict across a restart inside it (see
// holdAcrossRestart): pass two windows of points for that.
func Diagnose(pts []ledger.Point, cfg Config) Verdict {
	cfg = cfg.withDefaults()
	if len(pts) == 0 {
		return Verdict{Class: Insufficient, Headline: Headline(Insufficient), Evidence: []string{"no points yet"}}
	}
	first := windowStart(pts, cfg.Window)
	w := pts[first:]
	return diagnoseGroups(pts, first, cfg, ledger.PoolNames(w))
}

// windowStart is the index of the oldest of pts within window of the
// newest, counting back from it.
func windowStart(pts []ledger.Point, window time.Duration) int {
	newest := pts[len(pts)-1].Time
	first := len(pts) - 1
	for first > 0 && newest.Sub(pts[first-1].Time) <= window {
		first--
	}
	return first
}

// diagnoseGroups is Diagnose over the window pts[first:] (cfg with its
// defaults), given the pools that serve in it (names, sorted).
func diagnoseGroups(pts []ledger.Point, first int, cfg Config, names []string) Verdict {
	w := pts[first:]
	if len(names) == 0 {
		return judge(w, cfg, kvFacts(w, cfg.Thresholds))
	}
	var groups []GroupVerdict
	for _, name := range names {
		gw := ledger.PoolWindow(w, name)
		facts := kvFacts(gw, cfg.Thresholds)
		v := judge(gw, cfg, facts)
		if held, ok := holdAcrossRestart(pts, first, name, v, cfg); ok {
			v = held
		}
		last := gw[len(gw)-1]
		groups = append(groups, GroupVerdict{
			Group: name, Class: v.Class, Headline: v.Headline, Evidence: v.Evidence, Notes: v.Notes, Traffic: v.Traffic,
			Prefill: last.Prefill.Instances, Decode: last.Decode.Instances, KV: last.KV.Instances,
			HasKV: last.KV.Instances > 0, Samples: v.Samples,
			BytesPerTransfer: facts.bytesPerXfer, BytesSkew: facts.bytesSkew,
		})
	}
	v := summarise(groups, w, cfg)
	v.Groups = groups
	return v
}

// judge is the verdict of one group (or of the whole deployment when
// instances are not known) over the window w.
func judge(w []ledger.Point, cfg Config, facts transferFacts) Verdict {
	th := cfg.Thresholds
	newest := w[len(w)-1].Time
	var notes []string
	if k := filling(w); k > 0 {
		notes = append(notes, fmt.Sprintf("the first %.0f s of the window are left out: the pipeline was still filling (a stage had completed nothing yet)",
			w[k].Time.Sub(w[0].Time).Seconds()))
		w = w[k:]
	}
	v := Verdict{At: newest, Window: newest.Sub(w[0].Time).Seconds(), Notes: notes}

	prefill := collect(w, func(p *ledger.Point) ledger.Num { return p.Prefill.Instant })
	decode := collect(w, func(p *ledger.Point) ledger.Num { return p.Decode.Instant })
	usable := 0
	for i := range w {
		if w[i].Prefill.Instant.OK() && w[i].Decode.Instant.OK() {
			usable++
		}
	}
	v.Samples = usable
	if usable < cfg.MinSamples {
		v.Class, v.Headline = Insufficient, Headline(Insufficient)
		v.Evidence = []string{fmt.Sprintf("%d of %d points over %.0f s have both prefill and decode req/s; need %d",
			usable, len(w), v.Window, cfg.MinSamples)}
		if len(notes) > 0 {
			v.Evidence[0] += " after the pipeline filled"
		}
		if prefill.n() == 0 {
			v.Notes = append(v.Notes, "prefill req/s: "+lastWhy(w, func(p *ledger.Point) ledger.Num { return p.Prefill.Instant }))
		}
		if decode.n() == 0 {
			v.Notes = append(v.Notes, "decode req/s: "+lastWhy(w, func(p *ledger.Point) ledger.Num { return p.Decode.Instant }))
		}
		return v
	}

	s := measure(w, th)
	s.bytesSkew, s.bytesPerXfer = facts.bytesSkew, facts.bytesPerXfer
	if s.bytesSkew {
		s.notes = append(s.notes, fmt.Sprintf("one KV transfer carries %.3g GB on average, %+.0f%% off B_request: KV req/s is bytes ÷ B_request, not a request count, and KV is not judged by it alone",
			facts.bytesPerXfer/1e9, 100*(facts.bytesPerXfer/facts.bytesPerRequest-1)))
	}
	v.Notes = append(v.Notes, s.notes...)
	v.Traffic = s.traffic
	decide(&v, s, th)
	v.Headline = Headline(v.Class)
	noteFailures(&v, w)
	return v
}

func lastWhy(w []ledger.Point, get func(*ledger.Point) ledger.Num) string {
	for i := len(w) - 1; i >= 0; i-- {
		if n := get(&w[i]); !n.OK() {
			return n.Why
		}
	}
	return "absent"
}

// filling returns how many leading points to skip because the pipeline was
// still filling: at start-up decode completes nothing until the first
// requests have gone through prefill and transfer, which looks like a
// decode shortfall but is not one. Only a stall that ends inside the window
// is skipped; a stage that completes nothing for the whole window is left
// to the rules.
func filling(w []ledger.Point) int {
	skip := 0
	for _, get := range []func(*ledger.Point) ledger.Num{
		func(p *ledger.Point) ledger.Num { return p.Prefill.Instant },
		func(p *ledger.Point) ledger.Num { return p.KV.Instant },
		func(p *ledger.Point) ledger.Num { return p.Decode.Instant },
	} {
		for i := range w {
			if n := get(&w[i]); n.OK() && n.V > 0 {
				skip = max(skip, i)
				break
			}
		}
	}
	return skip
}
