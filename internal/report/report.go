package report

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/slo"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// Report is one run's report; its JSON keys are a contract
// (docs/report.md#the-json).
type Report struct {
	Run    Run    `json:"run"`
	Steady Steady `json:"steady"`
	// Load is the load offered against the load served over the steady
	// span: what a reader needs first.
	Load Load `json:"load"`
	// Events are what happened in the range: gaps, restarts, targets
	// down, changes of configuration or targets, parts lost.
	Events []Event `json:"events"`
	Stages Stages  `json:"stages"`
	// StageNotes say what the stages' curves mean for the engines that ran.
	StageNotes []string `json:"stage_notes,omitempty"`
	// Verdict is the steady span's modal verdict; Verdicts the whole
	// range's timeline.
	Verdict    Modal             `json:"verdict"`
	Verdicts   []Span            `json:"verdicts"`
	Capacities []advice.Capacity `json:"capacities"`
	Advice     *advice.Advice    `json:"advice"`
	AdviceWhy  string            `json:"advice_absent,omitempty"`
	SLO        *advice.SLOReport `json:"slo"`
	SLOAbsent  string            `json:"slo_absent,omitempty"`
	KV         KV                `json:"kv"`
	Outliers   []Outlier         `json:"outliers"`
	Series     Series            `json:"series"`
	// Pools are each pool's stages, verdict, capacity and advice, for a
	// run that served more than one pool.
	Pools []Pool `json:"pools,omitempty"`
	// Client is the load generator's own view of the run (docs/bench.md).
	Client *Client `json:"client,omitempty"`
}

// Run is what ran and the range reported.
type Run struct {
	Meta
	IntervalSeconds float64   `json:"interval_seconds"`
	WindowSeconds   float64   `json:"window_seconds"`
	From            time.Time `json:"from"`
	To              time.Time `json:"to"`
	Points          int       `json:"points"`
}

// sglangPrefillNote says why an SGLang prefill curve lies on the KV curve.
const sglangPrefillNote = "SGLang's prefill instances count a request finished only once its KV cache is sent (docs/engines.md): their prefill rate is their KV rate, a little behind it, and tells nothing of prefill's own compute"

// stageNotes are the notes the engines of targets call for.
func stageNotes(targets []Target) []string {
	for _, t := range targets {
		if t.Engine == "sglang" && t.Role == "prefill" {
			return []string{sglangPrefillNote}
		}
	}
	return nil
}

// Load is the arrival rate offered to the deployment (the router's, else
// estimated from prefill's completions and its growing queue; the
// advice's demand) and the rate served (decode's completions), req/s over
// the steady span; null with the reason when unknown.
type Load struct {
	OfferedRequestsPerSecond *float64 `json:"offered_requests_per_second"`
	OfferedBasis             string   `json:"offered_basis,omitempty"`
	OfferedAbsent            string   `json:"offered_absent,omitempty"`
	ServedRequestsPerSecond  *float64 `json:"served_requests_per_second"`
}

// Stages are the three stages' rates over the steady span.
type Stages struct {
	Prefill Stage `json:"prefill"`
	KV      Stage `json:"kv"`
	Decode  Stage `json:"decode"`
}

// of is stage s of st.
func (st *Stages) of(s stage.Stage) *Stage {
	switch s {
	case stage.Prefill:
		return &st.Prefill
	case stage.KV:
		return &st.KV
	default:
		return &st.Decode
	}
}

// stageTitles name the stages in the report's tables and charts.
var stageTitles = map[stage.Stage]string{stage.Prefill: "Prefill", stage.KV: "KV transfer", stage.Decode: "Decode"}

// Stage is one stage's mean completion rate over the steady span: the
// mean of the instant rates, which is the counters' increase over the span
// divided by its length.
type Stage struct {
	RequestsPerSecond *float64 `json:"requests_per_second"`
	Estimate
	// Capacity is the stage's learned capacity (req/s of the instances up
	// at the end), null while unknown.
	Capacity *float64 `json:"capacity_requests_per_second"`
}

// KV is the KV link's bytes and failures over the steady span.
type KV struct {
	BytesPerSecond    *float64    `json:"bytes_per_second"`
	BytesCI95         *[2]float64 `json:"bytes_per_second_ci95"`
	FailuresPerSecond *float64    `json:"failures_per_second"`
	// Failures is the failed transfers counted over the span.
	Failures *float64 `json:"failures"`
	Absent   string   `json:"absent,omitempty"`
}

// Series are the points' windowed rates for the charts: null where absent.
type Series struct {
	Time    []int64    `json:"time_unix_ms"`
	Prefill []*float64 `json:"prefill"`
	KV      []*float64 `json:"kv"`
	Decode  []*float64 `json:"decode"`
	KVBytes []*float64 `json:"kv_bytes_per_second"`
}

// of is the rates of stage s.
func (se *Series) of(s stage.Stage) []*float64 {
	switch s {
	case stage.Prefill:
		return se.Prefill
	case stage.KV:
		return se.KV
	default:
		return se.Decode
	}
}

const noThresholds = "no SLO threshold set (slo.ttft, slo.itl or slo.e2e)"

// Build computes the report of in over opts' range.
func Build(in Input, opts Options) (Report, error) {
	pts := in.Points
	if !opts.From.IsZero() || !opts.To.IsZero() {
		pts = clip(pts, opts.From, opts.To)
	}
	if len(pts) == 0 {
		return Report{}, errors.New("no points in the range")
	}
	// The steady span, the batches and the verdict windows count points
	// by their spacing: a point that does not advance in time has none.
	for i := 1; i < len(pts); i++ {
		if !pts[i].Time.After(pts[i-1].Time) {
			return Report{}, fmt.Errorf("point %d at %s is not after the one before it: want the points oldest first, one per instant",
				i, pts[i].Time.Format(time.RFC3339Nano))
		}
	}
	interval, window := in.Meta.Interval, in.Meta.Window
	if interval <= 0 {
		interval = guessInterval(pts)
	}
	if window <= 0 {
		window = ledger.DefaultWindow
	}
	r := Report{Run: Run{Meta: in.Meta, IntervalSeconds: interval.Seconds(), WindowSeconds: window.Seconds(),
		From: pts[0].Time, To: pts[len(pts)-1].Time, Points: len(pts)}}
	lo, hi, st := findSteady(pts, interval)
	r.Steady = st
	r.Events = events(in.Meta, pts, interval)
	steady := pts[lo : hi+1]

	batch := int(max(2*window, 10*time.Second) / interval)
	caps := advice.Learn(pts, advice.Options{Window: window, Prior: opts.Prior})
	r.Capacities = caps
	r.Stages = stagesOf(steady, batch, interval, caps)
	r.StageNotes = stageNotes(in.Meta.Targets)
	r.KV = kvOf(steady, batch, interval)

	dc := diagnoseConfig(window)
	var classes []diagnose.Class
	var byPool map[string]*poolVerdicts
	r.Verdicts, classes, byPool = timeline(pts, dc, interval)
	r.Verdict = modal(classes[lo:hi+1], r.Verdicts, st.From, st.To)

	headroom := advice.DefaultHeadroom
	if opts.HeadroomSet {
		headroom = opts.Headroom
	}
	r.Pools = poolsOf(pts, lo, hi, byPool, batch, interval, window, headroom)
	d := advice.EstimateDemand(steady, steady[len(steady)-1].Time.Sub(steady[0].Time)+interval)
	r.Load = Load{ServedRequestsPerSecond: r.Stages.Decode.RequestsPerSecond, OfferedBasis: d.Basis}
	if d.Observed.OK() {
		r.Load.OfferedRequestsPerSecond = ptr(d.Observed.V)
	} else {
		r.Load.OfferedAbsent = d.Observed.Why
	}
	if a, err := advice.Advise(caps, d, headroom); err != nil {
		r.AdviceWhy = err.Error()
	} else {
		r.Advice = &a
	}
	r.SLO, r.SLOAbsent = attainment(in, st, r.Pools)
	r.Outliers = outliers(steady, window)
	r.Series = seriesOf(pts)
	r.Client = clientOf(in, pts, interval)
	return r, nil
}

func clip(pts []ledger.Point, from, to time.Time) []ledger.Point {
	var out []ledger.Point
	for _, p := range pts {
		if (!from.IsZero() && p.Time.Before(from)) || (!to.IsZero() && p.Time.After(to)) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// guessInterval is the median spacing of the points (1 s when there is
// one point).
func guessInterval(pts []ledger.Point) time.Duration {
	if len(pts) < 2 {
		return time.Second
	}
	ds := make([]time.Duration, 0, len(pts)-1)
	for i := 1; i < len(pts); i++ {
		ds = append(ds, pts[i].Time.Sub(pts[i-1].Time))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// stagesOf is the three stages' means over pts with their intervals
// (batches of batch points) and the capacities caps learned.
func stagesOf(pts []ledger.Point, batch int, interval time.Duration, caps []advice.Capacity) Stages {
	return Stages{
		Prefill: stageOf(pts, batch, interval, func(p *ledger.Point) ledger.Num { return p.Prefill.Instant }, caps[0]),
		KV:      stageOf(pts, batch, interval, func(p *ledger.Point) ledger.Num { return p.KV.Instant }, caps[1]),
		Decode:  stageOf(pts, batch, interval, func(p *ledger.Point) ledger.Num { return p.Decode.Instant }, caps[2]),
	}
}

func stageOf(pts []ledger.Point, batch int, interval time.Duration, get func(*ledger.Point) ledger.Num, c advice.Capacity) Stage {
	var xs []float64
	for i := range pts {
		if v := get(&pts[i]); v.OK() {
			xs = append(xs, v.V)
		}
	}
	s := Stage{Estimate: batchMeans(xs, batch, interval.Seconds())}
	if len(xs) > 0 {
		s.RequestsPerSecond = ptr(s.Mean)
	}
	if c.Total.OK() {
		s.Capacity = ptr(c.Total.V)
	}
	return s
}

func kvOf(pts []ledger.Point, batch int, interval time.Duration) KV {
	var bytes, fails []float64
	for i := range pts {
		if v := pts[i].KV.BytesInstant; v.OK() {
			bytes = append(bytes, v.V)
		}
		if v := pts[i].KV.Failures; v.OK() {
			fails = append(fails, v.V)
		}
	}
	var k KV
	if len(bytes) == 0 {
		k.Absent = "no KV bytes/s in the steady span: no connector reported transferred bytes"
		if len(pts) > 0 && pts[len(pts)-1].KV.BytesInstant.Why != "" {
			k.Absent = "no KV bytes/s in the steady span: " + pts[len(pts)-1].KV.BytesInstant.Why
		}
	} else {
		e := batchMeans(bytes, batch, interval.Seconds())
		k.BytesPerSecond, k.BytesCI95 = ptr(e.Mean), e.CI95
	}
	if len(fails) > 0 {
		e := batchMeans(fails, batch, interval.Seconds())
		k.FailuresPerSecond = ptr(e.Mean)
		k.Failures = ptr(e.Mean * float64(len(fails)) * interval.Seconds())
	}
	return k
}

// SLOOver is the SLO attainment over from..to as a report reads it: the
// deployment's, or why it is absent, and each named pool's (Pool.SLO or
// Pool.SLOAbsent). A report reads its steady span so; a test reads the
// live API's window.
func SLOOver(in Input, from, to time.Time, pools ...string) (*advice.SLOReport, string, []Pool) {
	ps := make([]Pool, len(pools))
	for i, n := range pools {
		ps[i].Name = n
	}
	rep, why := attainment(in, Steady{From: from, To: to}, ps)
	return rep, why, ps
}

// attainment is the SLO attainment over the steady span as the live API
// reads it over its window: each role's, and the whole request's (the
// router's, else decode's from the arrival, else a bound over the legs;
// docs/advisor.md#the-whole-requests-slo), for the deployment and for each
// of pools, whose SLO it sets.
func attainment(in Input, st Steady, pools []Pool) (*advice.SLOReport, string) {
	absent := func(why string) (*advice.SLOReport, string) {
		for i := range pools {
			pools[i].SLOAbsent = why
		}
		return nil, why
	}
	if in.Meta.SLO == (slo.Thresholds{}) {
		return absent(noThresholds)
	}
	if in.Buckets == nil {
		return absent("the source keeps no latency histograms")
	}
	lat, err := in.Buckets(st.From, st.To)
	if err != nil {
		return absent("no latency histogram over the steady span: " + err.Error())
	}
	rep, err := advice.Attainment(in.Meta.SLO, lat.Whole)
	if err == nil {
		var req slo.Attainment
		req, err = advice.RequestAttainment(in.Meta.SLO, lat.Whole, lat.Pools)
		rep.Request = &req
	}
	if err != nil {
		return absent(fmt.Sprintf("SLO attainment: %v", err))
	}
	for i := range pools {
		b, ok := lat.Pools[pools[i].Name]
		if !ok {
			pools[i].SLOAbsent = "no instance of the pool at the steady span's end"
			continue
		}
		pr, err := advice.PoolAttainment(in.Meta.SLO, b)
		if err != nil {
			pools[i].SLOAbsent = fmt.Sprintf("SLO attainment: %v", err)
			continue
		}
		pools[i].SLO = &pr
	}
	return &rep, ""
}

func seriesOf(pts []ledger.Point) Series {
	var s Series
	num := func(n ledger.Num) *float64 {
		if !n.OK() {
			return nil
		}
		return ptr(n.V)
	}
	for i := range pts {
		p := &pts[i]
		s.Time = append(s.Time, p.Time.UnixMilli())
		s.Prefill = append(s.Prefill, num(p.Prefill.Window))
		s.KV = append(s.KV, num(p.KV.Window))
		s.Decode = append(s.Decode, num(p.Decode.Window))
		s.KVBytes = append(s.KVBytes, num(p.KV.BytesWindow))
	}
	return s
}

func ptr(v float64) *float64 { return &v }
