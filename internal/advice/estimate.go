package advice

import (
	"fmt"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Capacity bases: what a stage's capacity rests on (docs/advisor.md#bases).
const (
	// BasisSaturated: learned while the stage was saturated; it keeps
	// precedence over every estimate.
	BasisSaturated = "saturated"
	// BasisBusy: a work-proportional stage's rate over its busy fraction.
	BasisBusy = "busy"
	// BasisBatch: decode's rate carried from the batch it ran to the
	// largest batch it can run.
	BasisBatch = "batch"
	// BasisTransferTime: the KV bytes over the connectors' transfer
	// seconds, one transfer's speed.
	BasisTransferTime = "transfer_time"
)

// Bounds: an estimate that only bounds the capacity says which way.
const (
	AtLeast = "at_least"
	AtMost  = "at_most"
)

// DefaultHorizon is the span the estimates below saturation average over:
// long enough that a stage's rate at 1 req/s is known within a few per
// cent, short enough to follow a change of load within a minute.
const DefaultHorizon = time.Minute

// minBusySeconds is the busy instance-seconds, minRunSeconds the
// request-seconds of running decode batches, an estimate needs over the
// horizon before it is given.
const (
	minBusySeconds = 5
	minRunSeconds  = 20
	minPoints      = 10
)

// sample is one point's contribution to a stage's estimate: its rate and
// the work that carried it, with the instances up.
type sample struct {
	t                time.Time
	rate, work, size float64
	step             float64 // decode's mean step time, seconds; 0 when unknown
	up               int
	basis            string
}

// estimator keeps each stage's samples over the horizon.
type estimator struct {
	horizon time.Duration
	st      [3][]sample
	loads   [3][]sample // every complete rate, for the utilisation of a saturated capacity
	why     [3]string   // why the newest point gave no sample
}

func (e *estimator) observe(p ledger.Point) {
	if e.horizon <= 0 {
		e.horizon = DefaultHorizon
	}
	from := p.Time.Add(-e.horizon)
	keep := func(ss []sample) []sample {
		k := 0
		for k < len(ss) && !ss[k].t.After(from) {
			k++
		}
		return append(ss[:0], ss[k:]...)
	}
	add := func(i int, s sample, why string) {
		e.why[i] = why
		if why == "" {
			s.t = p.Time
			e.st[i] = append(e.st[i], s)
		}
		e.st[i] = keep(e.st[i])
	}
	for i, f := range [...]func(ledger.Point) (sample, string){
		func(p ledger.Point) (sample, string) { return prefillSample(p.Prefill) },
		func(p ledger.Point) (sample, string) { return kvSample(p.KV) },
		func(p ledger.Point) (sample, string) { return decodeSample(p.Decode) },
	} {
		s, why := f(p)
		add(i, s, why)
	}
	for i := range e.loads {
		rate, _, _, up, ok := stageRates(i, p)
		if ok && rate.OK() && up > 0 {
			e.loads[i] = append(e.loads[i], sample{t: p.Time, rate: rate.V, up: up})
		}
		e.loads[i] = keep(e.loads[i])
	}
}

func complete(s ledger.StagePoint) string {
	switch {
	case s.Up == 0:
		return "no instance up"
	case s.Partial || s.Up < s.Instances:
		return "not every instance is read"
	case !s.Window.OK():
		return s.Window.Why
	}
	return ""
}

// prefillSample: the requests prefilled per busy instance-second.
func prefillSample(s ledger.StagePoint) (sample, string) {
	if why := complete(s); why != "" {
		return sample{}, why
	}
	if !s.Busy.OK() {
		return sample{}, s.Busy.Why
	}
	return sample{rate: s.Window.V, work: s.Busy.V, up: s.Up, basis: s.BusyBasis}, ""
}

// decodeSample: the requests completed per request-second of running batch,
// and the batch the instances can run.
func decodeSample(s ledger.StagePoint) (sample, string) {
	if why := complete(s); why != "" {
		return sample{}, why
	}
	b := s.Batch
	switch {
	case b == nil:
		return sample{}, "no decode batch in the point"
	case !b.Running.OK():
		return sample{}, b.Running.Why
	case !b.Limit.OK():
		return sample{}, b.Limit.Why
	}
	step := 0.0
	if b.Step.OK() && b.Step.V > 0 {
		step = b.Step.V
	}
	return sample{rate: s.Window.V, work: b.Running.V, size: b.Limit.V, step: step, up: s.Up, basis: b.LimitBasis}, ""
}

// kvSample: the bytes moved per transfer-second, and the bytes of a request.
func kvSample(k ledger.KVPoint) (sample, string) {
	switch {
	case k.Up == 0:
		return sample{}, "no instance moves KV"
	case k.Partial:
		return sample{}, "not every KV instance is read"
	case !k.Window.OK() || !k.BytesWindow.OK():
		return sample{}, k.Window.Why
	case !k.LinkBusy.OK():
		return sample{}, k.LinkBusy.Why
	}
	perRequest := 0.0
	if k.Window.V > 0 {
		perRequest = k.BytesWindow.V / k.Window.V
	}
	return sample{rate: k.LinkBytes.V, work: k.LinkBusy.V, size: perRequest, up: max(k.Links, 1), basis: BasisTransferTime}, ""
}

// estimate is one stage's capacity below saturation.
type estimate struct {
	perInstance float64 // req/s of one instance at full use
	utilisation float64 // the horizon's rate over the capacity of the instances up
	bound       string
	basis       string
	detail      string
	seconds     float64
}

// estimate returns stage i's estimate over the horizon, or why there is none.
func (e *estimator) estimate(i int) (estimate, string) {
	ss := e.st[i]
	if len(ss) < minPoints {
		why := e.why[i]
		if why == "" {
			why = fmt.Sprintf("%d of %d points with the signals so far", len(ss), minPoints)
		}
		return estimate{}, "no estimate below saturation: " + why
	}
	var rate, work, size float64
	for _, s := range ss {
		rate += s.rate
		work += s.work
		size += s.size
	}
	basis := ss[len(ss)-1].basis // the newest point's: its instances' weakest
	n := float64(len(ss))
	span := ss[len(ss)-1].t.Sub(ss[0].t).Seconds() + 1
	up := float64(ss[len(ss)-1].up)
	var est estimate
	est.seconds = span
	switch stage.All[i] {
	case stage.Prefill:
		if work*span/n < minBusySeconds {
			return estimate{}, fmt.Sprintf("no estimate below saturation: prefill busy %.1f instance-seconds of the %.0f needed", work*span/n, float64(minBusySeconds))
		}
		// The busy fraction of each instance is its share of the work:
		// the stage's rate over its busy instances is one instance's
		// rate at full use.
		est.perInstance = rate / work
		est.utilisation = work / n / up
		est.basis = BasisBusy
		est.detail = fmt.Sprintf("%.2f req/s over %.2f busy instances (%s) in the last %.0f s", rate/n, work/n, basis, span)
	case stage.Decode:
		if work*span/n < minRunSeconds {
			return estimate{}, fmt.Sprintf("no estimate below saturation: decode ran %.1f request-seconds of the %.0f needed", work*span/n, float64(minRunSeconds))
		}
		// Each running request completes at rate/running, one token a
		// step; the instances run at most their batch limit at once, and
		// a step of a larger batch is longer by what the fit of the
		// steps against the batches shows.
		batch, limit := work/n/up, size/n/up // per instance
		g := fitSteps(ss)
		slower, how := g.slowdown(batch, limit)
		total := rate / work * size / n / slower
		est.perInstance = total / up
		est.utilisation = (work / n) / (size / n) * slower
		est.basis = BasisBatch
		est.detail = fmt.Sprintf("%.2f req/s from a batch of %.1f, limit %.0f (%s), %s, in the last %.0f s", rate/n, work/n, size/n, basis, how, span)
	default:
		if work <= 0 || size <= 0 {
			return estimate{}, "no estimate below saturation: no KV transfer in the last minute"
		}
		// Bytes per transfer-second is one transfer's speed: the link's
		// when transfers do not overlap, less than it when they share it.
		// A link is busy at most the share of time a transfer is in
		// flight on it: exactly that when transfers do not overlap.
		speed := rate / work
		est.perInstance = speed / (size / n)
		est.utilisation = work / n / up
		est.basis = BasisTransferTime
		est.bound = AtLeast
		est.detail = fmt.Sprintf("%.3g GB/s per link from %.2f transfers in flight, %.3g GB per request, in the last %.0f s", speed/1e9, work/n, size/n/1e9, span)
	}
	return est, ""
}

// load is stage i's mean rate per instance up over the horizon, from every
// point with a complete rate (with or without the busy-time signals), and
// false when there is none.
func (e *estimator) load(i int) (float64, bool) {
	ls := e.loads[i]
	if len(ls) == 0 {
		return 0, false
	}
	var sum float64
	for _, s := range ls {
		sum += s.rate / float64(s.up)
	}
	return sum / float64(len(ls)), true
}
