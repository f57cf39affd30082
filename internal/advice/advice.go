package advice

import (
	"fmt"
	"math"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// DefaultHeadroom leaves a fifth of every stage's capacity unused.
const DefaultHeadroom = 0.2

// Demand is the arrival rate the advice sizes for.
type Demand struct {
	// Observed is the arrival rate: the router's, where the pool has one
	// (router.go), else estimated from the points: prefill completions plus
	// the growth of the requests held on prefill. Basis says which.
	Observed ledger.Num `json:"observed_requests_per_second"`
	Basis    string     `json:"basis"`
	// RemotePrefillShare is the share of requests the router sends to a
	// prefill instance first, where it exports its P/D decisions: prefill
	// and the KV transfer are sized for that share of the target, decode
	// for all of it.
	RemotePrefillShare ledger.Num `json:"remote_prefill_share"`
	// Multiplier scales Observed ("what if 1.5×"); Rate overrides both.
	Multiplier float64    `json:"multiplier"`
	Target     ledger.Num `json:"target_requests_per_second"`
	// BytesPerRequest is B_request as the KV curve implies it (KV bytes/s
	// ÷ KV req/s).
	BytesPerRequest ledger.Num `json:"kv_bytes_per_request"`
	Lookback        float64    `json:"lookback_seconds"`
}

// MarshalJSON adds the reasons of absent values.
func (d Demand) MarshalJSON() ([]byte, error) {
	type alias Demand
	return marshalWithAbsent(d, alias(d))
}

// EstimateDemand estimates the arrival rate over the last lookback of
// points (oldest first). By conservation on the prefill side, arrivals =
// prefill completions + the growth of the requests held there (waiting,
// running and, for SGLang, bootstrap and inflight), so the estimate holds
// while prefill is saturated or blocked, when its completion rate no longer
// shows the load.
func EstimateDemand(points []ledger.Point, lookback time.Duration) Demand {
	d := Demand{Multiplier: 1, Lookback: lookback.Seconds(), Basis: BasisInferred, RemotePrefillShare: ledger.Absent(ledger.WhyNoRouter)}
	if len(points) == 0 {
		d.Observed = ledger.Absent("no points yet")
		d.BytesPerRequest = ledger.Absent("no points yet")
		d.Target = d.Observed
		return d
	}
	end := points[len(points)-1].Time
	var rate stat
	var xs, ys []float64
	for _, p := range points {
		if !p.Time.After(end.Add(-lookback)) {
			continue
		}
		if p.Prefill.Window.OK() && !p.Prefill.Partial {
			rate.add(p.Prefill.Window.V)
		}
		if held, ok := heldOnPrefill(p.Prefill); ok {
			xs = append(xs, p.Time.Sub(end).Seconds())
			ys = append(ys, held)
		}
	}
	last := points[len(points)-1]
	if k := last.KV; k.BytesWindow.OK() && k.Window.OK() && k.Window.V > 0 {
		d.BytesPerRequest = ledger.Val(k.BytesWindow.V / k.Window.V)
	} else if !k.Window.OK() {
		d.BytesPerRequest = ledger.Absent(k.Window.Why)
	} else {
		d.BytesPerRequest = ledger.Absent("no KV transfer in the window")
	}
	switch {
	case rate.n == 0:
		d.Observed = ledger.Absent("no complete prefill rate in the last " + lookback.String())
	case len(xs) < 2:
		d.Observed = ledger.Absent("prefill waiting/running gauges missing: the queue's growth is unknown")
	default:
		d.Observed = ledger.Val(math.Max(0, rate.mean+slope(xs, ys)))
	}
	d.Basis = BasisInferred
	if shed, ok := shedMean(points, end.Add(-lookback)); ok && d.Observed.OK() {
		// Arrivals = served + shed.
		d.Observed = ledger.Val(d.Observed.V + shed)
		d.Basis += BasisShed
	}
	routerArrival(&d, points, end.Add(-lookback))
	d.Target = d.Observed
	return d
}

// heldOnPrefill is the number of requests on the prefill side that have
// arrived and not yet been counted as prefill completions.
func heldOnPrefill(s ledger.StagePoint) (float64, bool) {
	if !s.Waiting.OK() || !s.Running.OK() {
		return 0, false
	}
	n := s.Waiting.V + s.Running.V
	// SGLang holds requests in its bootstrap queue before prefill, and
	// counts a prefill completion only once the KV has left (inflight).
	if s.Queues.Bootstrap.OK() {
		n += s.Queues.Bootstrap.V
	}
	if s.Queues.Inflight.OK() {
		n += s.Queues.Inflight.V
	}
	return n, true
}

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// StageAdvice is the instance count of one stage.
type StageAdvice struct {
	Stage stage.Stage `json:"stage"`
	// Instances is the smallest count whose learned capacity carries the
	// target at the headroom.
	Instances ledger.Num `json:"instances"`
	// AtMost bounds the count from above while the stage's capacity is
	// unknown: its capacity is at least what it sustained.
	AtMost  ledger.Num `json:"at_most"`
	Current int        `json:"current"`
	// Utilisation is target ÷ (Instances × capacity per instance).
	Utilisation ledger.Num `json:"utilisation"`
}

// MarshalJSON adds the reasons of absent values.
func (s StageAdvice) MarshalJSON() ([]byte, error) {
	type alias StageAdvice
	return marshalWithAbsent(s, alias(s))
}

// KVAdvice is the KV bandwidth that carries the target.
type KVAdvice struct {
	// BytesPerSecond is target × B_request ÷ (1 − headroom).
	BytesPerSecond ledger.Num `json:"bytes_per_second"`
	// Capacity is the KV bytes/s the links sustained at saturation now.
	Capacity ledger.Num `json:"capacity_bytes_per_second"`
	// Links is how many links of the learned per-link bandwidth that takes.
	Links   ledger.Num `json:"links"`
	Current int        `json:"current_links"`
}

// MarshalJSON adds the reasons of absent values.
func (k KVAdvice) MarshalJSON() ([]byte, error) {
	type alias KVAdvice
	return marshalWithAbsent(k, alias(k))
}

// Advice is the sizing for one target arrival rate.
type Advice struct {
	Demand   Demand      `json:"demand"`
	Headroom float64     `json:"headroom"`
	Prefill  StageAdvice `json:"prefill"`
	Decode   StageAdvice `json:"decode"`
	KV       KVAdvice    `json:"kv"`
	// Ratio is prefill ÷ decode instances, RatioText the same as "P:D".
	Ratio     ledger.Num `json:"pd_ratio"`
	RatioText string     `json:"pd"`
	// RatioBound bounds the ratio when one stage's count is known and the
	// other's only bounded from above.
	RatioBound string `json:"pd_bound,omitempty"`
	// Short lists the stages whose current capacity is below the target
	// at the headroom.
	Short      []stage.Stage `json:"short,omitempty"`
	Capacities []Capacity    `json:"capacities"`
	// LimitsFirst is the stage that will limit first as load grows.
	LimitsFirst LimitsFirst `json:"limits_first"`
	// CapacityRatio is the P:D ratio that balances the stages' capacities
	// per instance (prefill instances per decode instance), whatever the
	// load; CapacityRatioText says what it rests on.
	CapacityRatio     ledger.Num `json:"pd_capacity_ratio"`
	CapacityRatioText string     `json:"pd_capacity,omitempty"`
}

// MarshalJSON adds the reasons of absent values.
func (a Advice) MarshalJSON() ([]byte, error) {
	type alias Advice
	return marshalWithAbsent(a, alias(a))
}

// Advise sizes each stage for d.Target with the given headroom (the
// fraction of capacity left unused, 0 ≤ headroom < 1) from caps (as
// returned by Learn: prefill, kv, decode).
func Advise(caps []Capacity, d Demand, headroom float64) (Advice, error) {
	if headroom < 0 || headroom >= 1 || math.IsNaN(headroom) {
		return Advice{}, fmt.Errorf("headroom %g: want 0 ≤ headroom < 1", headroom)
	}
	if len(caps) != 3 {
		return Advice{}, fmt.Errorf("want the capacities of prefill, kv and decode, got %d", len(caps))
	}
	a := Advice{Demand: d, Headroom: headroom, Capacities: caps, LimitsFirst: limitsFirst(caps)}
	a.CapacityRatio, a.CapacityRatioText = capacityRatio(caps)
	remote := d.remote()
	a.Prefill = sizeStage(caps[0], remote.Target, headroom)
	a.Decode = sizeStage(caps[2], d.Target, headroom)
	a.KV = sizeKV(caps[1], remote, headroom)
	for _, s := range []StageAdvice{a.Prefill, a.Decode} {
		if s.Instances.OK() && s.Instances.V > float64(s.Current) {
			a.Short = append(a.Short, s.Stage)
		}
	}
	if a.KV.Links.OK() && a.KV.Links.V > float64(a.KV.Current) {
		a.Short = append(a.Short, stage.KV)
	}
	switch {
	case a.Prefill.Instances.OK() && a.Decode.Instances.OK():
		a.Ratio = ledger.Val(a.Prefill.Instances.V / a.Decode.Instances.V)
		a.RatioText = fmt.Sprintf("%g:%g", a.Prefill.Instances.V, a.Decode.Instances.V)
	case !a.Prefill.Instances.OK():
		a.Ratio = ledger.Absent("prefill instances unknown: " + a.Prefill.Instances.Why)
		if a.Decode.Instances.OK() && a.Prefill.AtMost.OK() {
			a.RatioBound = fmt.Sprintf("P:D ≤ %g:%g (prefill at most %g)", a.Prefill.AtMost.V, a.Decode.Instances.V, a.Prefill.AtMost.V)
		}
	default:
		a.Ratio = ledger.Absent("decode instances unknown: " + a.Decode.Instances.Why)
		if a.Decode.AtMost.OK() {
			a.RatioBound = fmt.Sprintf("P:D ≥ %g:%g (decode at most %g)", a.Prefill.Instances.V, a.Decode.AtMost.V, a.Decode.AtMost.V)
		}
	}
	return a, nil
}

// need is the smallest n with rate ≤ n × per × (1 − headroom). The small
// tolerance keeps an exact fit from rounding up on float noise.
func need(rate, per, headroom float64) float64 {
	n := math.Ceil(rate/(per*(1-headroom)) - 1e-9)
	return math.Max(1, n)
}

func sizeStage(c Capacity, target ledger.Num, h float64) StageAdvice {
	s := StageAdvice{Stage: c.Stage, Current: c.Instances}
	switch {
	case !target.OK():
		s.Instances = ledger.Absent("arrival rate unknown: " + target.Why)
		s.AtMost, s.Utilisation = s.Instances, s.Instances
		return s
	case !c.PerInstance.OK():
		s.Instances = ledger.Absent(c.PerInstance.Why)
		s.Utilisation = s.Instances
	case c.PerInstance.V <= 0:
		s.Instances = ledger.Absent(string(c.Stage) + " sustained no requests while saturated")
		s.Utilisation = s.Instances
	default:
		n := need(target.V, c.PerInstance.V, h)
		s.Instances = ledger.Val(n)
		s.Utilisation = ledger.Val(target.V / (n * c.PerInstance.V))
	}
	switch {
	case c.PerInstance.OK():
		s.AtMost = ledger.Absent("the capacity is known: see instances")
	case c.AtLeast.OK() && c.AtLeast.V > 0:
		s.AtMost = ledger.Val(need(target.V, c.AtLeast.V, h))
	default:
		s.AtMost = ledger.Absent("no unsaturated stretch carried load yet: " + c.AtLeast.Why)
	}
	return s
}

func sizeKV(c Capacity, d Demand, h float64) KVAdvice {
	k := KVAdvice{Current: c.Instances}
	switch {
	case !d.Target.OK():
		k.BytesPerSecond = ledger.Absent("arrival rate unknown: " + d.Target.Why)
	case !d.BytesPerRequest.OK():
		k.BytesPerSecond = ledger.Absent("B_request unknown: " + d.BytesPerRequest.Why)
	default:
		k.BytesPerSecond = ledger.Val(d.Target.V * d.BytesPerRequest.V / (1 - h))
	}
	if c.Bytes.OK() && c.Instances > 0 {
		k.Capacity = ledger.Val(c.Bytes.V * float64(c.Instances))
	} else if !c.Bytes.OK() {
		k.Capacity = ledger.Absent(c.Bytes.Why)
	} else {
		k.Capacity = ledger.Absent("no KV-exporting instance up now")
	}
	switch {
	case !k.BytesPerSecond.OK():
		k.Links = k.BytesPerSecond
	case !c.Bytes.OK():
		k.Links = ledger.Absent(c.Bytes.Why)
	case c.Bytes.V <= 0:
		k.Links = ledger.Absent("kv moved no bytes while saturated")
	default:
		k.Links = ledger.Val(math.Max(1, math.Ceil(k.BytesPerSecond.V/c.Bytes.V-1e-9)))
	}
	return k
}

// WithTarget returns d sized for multiplier × the observed rate, or for
// rate when rate > 0.
func (d Demand) WithTarget(multiplier, rate float64) (Demand, error) {
	switch {
	case rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0):
		return d, fmt.Errorf("rate %g: want a finite rate ≥ 0", rate)
	case rate > 0:
		d.Multiplier = 0
		d.Target = ledger.Val(rate)
		return d, nil
	case multiplier <= 0 || math.IsNaN(multiplier) || math.IsInf(multiplier, 0):
		return d, fmt.Errorf("multiplier %g: want a finite multiplier > 0", multiplier)
	}
	d.Multiplier = multiplier
	if d.Observed.OK() {
		d.Target = ledger.Val(d.Observed.V * multiplier)
	} else {
		d.Target = d.Observed
	}
	return d, nil
}
