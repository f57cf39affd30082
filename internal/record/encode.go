//go:build !norecord

package record

import (
	"math"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// subMilli is the part of t's Unix time below the millisecond, in ns: the
// TSDB keeps milliseconds, the ledger's rates divide by nanoseconds, and a
// replay must see the times the live ledger saw.
func subMilli(t time.Time) float64 { return float64(t.UnixNano() % int64(time.Millisecond)) }

// failureClass is the class a failed scrape is counted under, as the
// ledger counts it.
func failureClass(s *ledger.Scrape) scrape.Reason {
	if s.Reason != "" {
		return s.Reason
	}
	return scrape.ReasonOf(s.Err)
}

// errorText is the text the ledger shows for a failed scrape, bounded.
func errorText(s *ledger.Scrape) string {
	if s.Err == nil {
		return ""
	}
	msg := s.Err.Error()
	if len(msg) > maxErrorText {
		msg = msg[:maxErrorText]
	}
	return msg
}

// scrape writes one scrape: its marker (with its exact time and its place
// among the ticks), its cost, and every canonical value it read.
func (w *appender) scrape(e *event) error {
	s := &e.scrape
	tgt := s.Target
	ts := s.Time.UnixMilli()
	var order float64
	if !e.after.IsZero() {
		// On the wall clock, as the times are recorded: the monotonic
		// clock's difference drifts from it by the slew, and the read
		// would be placed beside its tick rather than on it.
		order = float64(s.Time.Round(0).Sub(e.after.Round(0)))
	}
	tr := w.target(tgt)
	var err error
	// A read's own series, kept per target: no lookup by their labels.
	put := func(r *ref, name string, v float64) {
		if err != nil {
			return
		}
		if r.ls.IsEmpty() {
			r.ls = lbls(name, labelTarget, tgt)
		}
		_, err = w.put(r, ts, v)
	}
	o := &e.obs
	if e.ok {
		m := &tr.marker
		if mk := (markerKey{o.Engine, o.Role, o.Model, o.SchedulerMode}); m.ls.IsEmpty() || mk != tr.markerKey {
			*m, tr.markerKey = ref{ls: lbls(nameScrape, labelTarget, tgt, labelEngine, string(o.Engine), labelRole, string(o.Role), labelModel, o.Model, labelMode, o.SchedulerMode)}, mk
		}
		_, err = w.put(m, ts, subMilli(s.Time))
	} else {
		// The series is the failure's class, a fixed set; its text, which
		// varies without bound, goes to ErrorsFile (errtext.go).
		reason := string(failureClass(s))
		err = w.add(seriesKey{target: tgt, name: nameFailed, a: reason}, func() labels.Labels {
			return lbls(nameFailed, labelTarget, tgt, labelReason, reason)
		}, ts, subMilli(s.Time))
	}
	put(&tr.order, nameOrder, order)
	put(&tr.duration, nameDuration, s.Duration.Seconds())
	put(&tr.bytes, nameBytes, float64(s.Bytes))
	put(&tr.samples, nameSamples, float64(s.Samples))
	if !e.ok {
		tr.reads.complete = 0 // the next read holds every value again
		return err
	}
	changes := tr.reads.begin(ts)
	if changes {
		put(&tr.changes, nameChanges, 1)
	}
	if err != nil {
		return err
	}
	for _, c := range o.Counters {
		k := counterKey{c.Metric, c.Series}
		r := tr.counters[k]
		if r == nil {
			r = &ref{ls: lbls(counterName(c.Metric), labelTarget, tgt, labelSeries, seriesID(c.Series))}
			tr.counters[k] = r
		}
		if err = w.value(r, &tr.reads, changes, ts, c.Value); err != nil {
			return err
		}
	}
	for i, ok := range o.HasGauges {
		if !ok {
			continue
		}
		r := &tr.gauges[i]
		if r.ls.IsEmpty() {
			r.ls = lbls(gaugeName(engine.GaugeAt(i)), labelTarget, tgt)
		}
		if err = w.value(r, &tr.reads, changes, ts, o.Gauges[i]); err != nil {
			return err
		}
	}
	for i := range o.Histograms {
		h := &o.Histograms[i]
		if !h.Present || len(h.Buckets) == 0 {
			continue // the ledger takes such a histogram for absent
		}
		if err = w.histogram(&tr.hists[i], tr, changes, tgt, engine.HistogramAt(i), h, ts); err != nil {
			return err
		}
	}
	return w.sweep(tr, ts)
}

// histogram appends one histogram's buckets, sum and count.
func (w *appender) histogram(hr *histRefs, tr *targetRefs, changes bool, tgt string, m engine.Metric, h *engine.Histogram, ts int64) error {
	base := prefixRead + m.String()
	if !sameLEs(hr.les, h.Buckets) {
		// Other bounds: a bucket of a bound kept is the same series; the
		// others are gone.
		buckets := make([]ref, len(h.Buckets))
		for i, b := range h.Buckets {
			if j := slices.Index(hr.les, b.UpperBound); j >= 0 && !hr.buckets[j].ls.IsEmpty() {
				buckets[i], hr.buckets[j] = hr.buckets[j], ref{}
				continue
			}
			buckets[i].ls = lbls(base+suffixBucket, labelTarget, tgt, "le", formatLE(b.UpperBound))
		}
		for i := range hr.buckets {
			if err := w.stale(&hr.buckets[i], ts); err != nil {
				return err
			}
		}
		hr.buckets, hr.les = buckets, hr.les[:0]
		for _, b := range h.Buckets {
			hr.les = append(hr.les, b.UpperBound)
		}
	}
	for i, b := range h.Buckets {
		if err := w.value(&hr.buckets[i], &tr.reads, changes, ts, b.Count); err != nil {
			return err
		}
	}
	if hr.sum.ls.IsEmpty() {
		hr.sum.ls = lbls(base+suffixSum, labelTarget, tgt)
		hr.count.ls = lbls(base+suffixCount, labelTarget, tgt)
	}
	if err := w.value(&hr.sum, &tr.reads, changes, ts, h.Sum); err != nil {
		return err
	}
	return w.value(&hr.count, &tr.reads, changes, ts, h.Count)
}

func sameLEs(les []float64, bs []engine.Bucket) bool {
	if len(les) != len(bs) {
		return false
	}
	for i, b := range bs {
		if les[i] != b.UpperBound && !(math.IsNaN(les[i]) && math.IsNaN(b.UpperBound)) {
			return false
		}
	}
	return true
}

// tick writes the tick's exact time and the point's derived series;
// absent values are not written (unknown is never 0).
func (w *appender) tick(at time.Time, p *ledger.Point) error {
	ts := at.UnixMilli()
	var err error
	put := func(k seriesKey, mk func() labels.Labels, n ledger.Num) {
		if err == nil && n.OK() && !math.IsNaN(n.V) {
			err = w.add(k, mk, ts, n.V)
		}
	}
	put(seriesKey{name: nameTick}, func() labels.Labels { return lbls(nameTick) }, ledger.Val(subMilli(at)))
	if w.run != "" {
		put(seriesKey{name: nameRun}, func() labels.Labels { return lbls(nameRun, labelRunID, w.run) }, ledger.Val(1))
	}
	stage := func(name string, inst, win ledger.Num, window string) {
		put(seriesKey{name: nameStageRate, a: name, b: "instant"}, func() labels.Labels {
			return lbls(nameStageRate, labelStage, name, labelWindow, "instant")
		}, inst)
		put(seriesKey{name: nameStageRate, a: name, b: window}, func() labels.Labels {
			return lbls(nameStageRate, labelStage, name, labelWindow, window)
		}, win)
	}
	win := w.window
	stage("prefill", p.Prefill.Instant, p.Prefill.Window, win)
	stage("kv", p.KV.Instant, p.KV.Window, win)
	stage("decode", p.Decode.Instant, p.Decode.Window, win)
	put(seriesKey{name: nameKVBytesPS, a: "instant"}, func() labels.Labels { return lbls(nameKVBytesPS, labelWindow, "instant") }, p.KV.BytesInstant)
	put(seriesKey{name: nameKVBytesPS, a: win}, func() labels.Labels { return lbls(nameKVBytesPS, labelWindow, win) }, p.KV.BytesWindow)
	for _, sp := range []struct {
		name string
		p    *ledger.StagePoint
	}{{"prefill", &p.Prefill}, {"decode", &p.Decode}} {
		name := sp.name
		put(seriesKey{name: nameRunning, a: name}, func() labels.Labels { return lbls(nameRunning, labelStage, name) }, sp.p.Running)
		put(seriesKey{name: nameWaiting, a: name}, func() labels.Labels { return lbls(nameWaiting, labelStage, name) }, sp.p.Waiting)
	}
	q := func(queue string, n ledger.Num) {
		put(seriesKey{name: nameQueue, a: queue}, func() labels.Labels { return lbls(nameQueue, labelQueue, queue) }, n)
	}
	q("bootstrap", p.Prefill.Queues.Bootstrap)
	q("inflight", p.Prefill.Queues.Inflight)
	q("prealloc", p.Decode.Queues.Prealloc)
	q("transfer", p.Decode.Queues.Transfer)
	return err
}
