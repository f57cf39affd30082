package engine

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"unique"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/ptdmon/ptdmon/internal/parse"
)

// DefaultMaxSeries bounds the series one target may expose.
const DefaultMaxSeries = 200_000

// ErrRole is wrapped by errors for instances whose role cannot be told.
var ErrRole = errors.New("role unknown")

// ErrUnusable is wrapped by errors for well-formed expositions that ptdmon
// cannot read as an engine (no engine metrics, mixed engines, too many series).
var ErrUnusable = errors.New("unusable exposition")

// Reader turns one target's expositions into Observations. It keeps a cache
// of what each raw series means, so a steady-state read does not allocate.
// It is not safe for concurrent use; keep one per target.
type Reader struct {
	adapters  []*adapter
	engine    Engine
	role      Role
	kv        KVSource
	explain   bool
	MaxSeries int

	parser  parse.Parser
	cache   map[string]*entry
	order   []*entry // the entry of the i-th visited sample of the last read
	pos     int      // samples visited in this read
	touched int      // cache entries seen in this read
	gen     uint32
	staged  []staged
	lbls    labels.Labels
	minRank map[groupKey]int32
	primary [NumMetrics]bool
	gsum    [NumGauges]float64
	gcnt    [NumGauges]int
	obs     Observation
	ignored map[string]string
	err     error
	// claimed: adapters whose families the read found when it read none
	// (bit i: adapter i), for detection (detectFallback)
	claimed uint64
}

type staged struct {
	b *entry
	m Metric // b.metric, or b.metric2 for a second label value
	v float64
}

type groupKey struct {
	metric Metric
	group  uint64
}

// NewReader returns a Reader for a target of the given engine (EngineAuto to
// detect it) and role (RoleUnknown to take it from the exposition). kv
// restricts KV bytes to one connector (KVAuto: every connector found).
func NewReader(engine Engine, role Role, kv KVSource) *Reader {
	r := &Reader{
		adapters:  snapshot(),
		engine:    engine,
		role:      role,
		kv:        kv,
		MaxSeries: DefaultMaxSeries,
		cache:     make(map[string]*entry),
		minRank:   make(map[groupKey]int32),
	}
	r.parser.Wanted = r.wanted
	return r
}

// Explain makes the Reader list every family it skips, with the reason.
func (r *Reader) Explain() {
	r.explain = true
	r.ignored = make(map[string]string)
	r.parser.Wanted = nil // every family, to name the skipped ones
}

// wanted reports whether samples named name can be read at all, whatever
// their labels and type: names no adapter claims, names outside the
// claiming adapter's table and _created samples are skipped by the parser
// before their labels or values are read, so they cost no state per series.
func (r *Reader) wanted(name string) bool {
	if strings.HasSuffix(name, "_created") {
		return false
	}
	i := claim(r.adapters, name)
	if i < 0 {
		return false
	}
	a := r.adapters[i]
	if a.lookup(a.plain, name) != nil {
		return true
	}
	base, _, isHist := splitHistogram(name)
	return isHist && a.lookup(a.hist, base) != nil
}

// Read parses one exposition. On error nothing of it is kept. The returned
// Observation is reused by the next call.
func (r *Reader) Read(body []byte, contentType string) (*Observation, error) {
	r.gen++
	r.pos, r.touched = 0, 0
	r.staged = r.staged[:0]
	r.err = nil
	o := &r.obs
	o.reset()
	if err := r.parser.Parse(body, contentType, r.visit); err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	r.claimed = 0
	if len(r.staged) == 0 && r.engine == EngineAuto {
		var err error
		if r.claimed, err = r.detectFallback(body, contentType); err != nil {
			return nil, err
		}
	}
	if err := r.finish(o); err != nil {
		return nil, err
	}
	o.Samples = r.parser.Samples()
	if r.gen%16 == 0 {
		r.evict()
	}
	return o, nil
}

func (r *Reader) visit(s *parse.Sample) error {
	b := r.lookup(s)
	if b == nil || b.mtype != s.Type {
		if b == nil && len(r.cache) >= r.MaxSeries {
			return fmt.Errorf("%w: more than %d series", ErrUnusable, r.MaxSeries)
		}
		k := readerKey{r.engine, r.role, r.kv, len(r.adapters)}
		e := entry{meaning: known(k, s.Series, s.Type)}
		if e.meaning == nil {
			r.parser.Labels(&r.lbls)
			m, fam := split(r.classify(string(s.Name), s.Type))
			m.key = string(s.Series)
			m.model = intern(m.model) // not the label text it was cut from
			fam.family, fam.why = intern(fam.family), intern(fam.why)
			e.meaning = share(k, m, fam)
		}
		if old := r.cache[e.key]; old != nil && old.gen == r.gen {
			r.touched-- // counted once already in this read
		}
		b = &e
		r.cache[e.key] = b
		r.remember(b)
	}
	if b.gen != r.gen {
		b.gen = r.gen
		r.touched++
	}
	if b.use && b.note && r.explain {
		// A note on a series that is read (a label read by another
		// name) is for ptdmon inspect, not for every scrape's notes.
		r.addNote(b.family + ": " + b.why)
	}
	if !b.use {
		if b.note {
			r.addNote(b.family + ": " + b.why)
		}
		if r.explain {
			if _, seen := r.ignored[b.family]; !seen && b.family != "" {
				r.ignored[b.family] = b.why
			}
		}
		return nil
	}
	if b.fromLabels {
		// An info gauge: its labels hold the values.
		if b.lvOK[0] {
			r.staged = append(r.staged, staged{b, b.metric, b.lv[0]})
		}
		if b.lvOK[1] {
			r.staged = append(r.staged, staged{b, b.metric2, b.lv[1]})
		}
		return nil
	}
	if math.IsNaN(s.Value) {
		return nil
	}
	if b.metric.Kind() == KindCounter && s.Value < 0 {
		return nil
	}
	r.staged = append(r.staged, staged{b, b.metric, s.Value})
	if b.hasAlso {
		r.staged = append(r.staged, staged{b, b.also, s.Value})
	}
	return nil
}

// lookup finds the binding of a sample: first where the same position
// held it in the last read; expositions list their series in the same
// order every time, so this is at most one comparison of the series text,
// none when the parser knows the series to be the Same. Else by the
// series text in the cache.
func (r *Reader) lookup(s *parse.Sample) *entry {
	i := r.pos
	r.pos++
	if i < len(r.order) {
		if b := r.order[i]; b != nil && (s.Same || b.key == string(s.Series)) {
			return b
		}
	}
	b := r.cache[string(s.Series)]
	if b != nil {
		r.remember(b)
	}
	return b
}

// remember puts b at the current position of the order.
func (r *Reader) remember(b *entry) {
	i := r.pos - 1
	for len(r.order) <= i {
		r.order = append(r.order, nil)
	}
	r.order[i] = b
}

func (r *Reader) classify(name string, t model.MetricType) binding {
	var b binding
	i := -1
	if strings.HasSuffix(name, "_created") {
		b = skip(name, "creation timestamp, not a sample value")
	} else if i = claim(r.adapters, name); i >= 0 {
		b = r.adapters[i].bind(name, t, r.lbls, r.role)
	} else {
		b = skip(familyOf(name), "not an engine metric ptdmon reads")
	}
	b.adapter = int8(i)
	if b.use && b.kv != KVAuto && r.kv != KVAuto && b.kv != r.kv {
		b = skip(b.family, fmt.Sprintf("KV source %s not selected (kv_source: %s)", b.kv, r.kv))
	}
	if b.use && b.engine != r.engine && r.engine != EngineAuto {
		b = skip(b.family, fmt.Sprintf("a %s metric on a target configured as %s", b.engine, r.engine))
	}
	b.mtype = t
	return b
}

func familyOf(name string) string {
	if base, _, ok := splitHistogram(name); ok {
		return base
	}
	return name
}

// finish applies the rank and fallback rules and aggregates the staged samples.
func (r *Reader) finish(o *Observation) error {
	clear(r.minRank)
	r.primary = [NumMetrics]bool{}
	var engines uint64 // bit i: adapter i's families were read
	var roles [2]bool  // prefill, decode
	for _, s := range r.staged {
		b := s.b
		if !b.fallback {
			r.primary[s.m] = true
		}
		if b.rank >= 0 {
			k := groupKey{s.m, b.group}
			if cur, ok := r.minRank[k]; !ok || b.rank < cur {
				r.minRank[k] = b.rank
			}
		}
		engines |= 1 << b.adapter
		switch b.role {
		case Prefill:
			roles[0] = true
		case Decode:
			roles[1] = true
		}
		if o.Model == "" && b.model != "" {
			o.Model = b.model
		}
	}
	if err := r.resolve(o, engines, roles); err != nil {
		return err
	}
	r.gsum = [NumGauges]float64{}
	r.gcnt = [NumGauges]int{}
	nanLE := false // a bucket bound of NaN was added (Histogram.addAt)
	for _, s := range r.staged {
		b := s.b
		if b.fallback && r.primary[s.m] {
			continue
		}
		if b.rank >= 0 && b.rank != r.minRank[groupKey{s.m, b.group}] {
			continue
		}
		v := s.v * b.scale
		switch s.m.Kind() {
		case KindCounter:
			o.Counters = append(o.Counters, CounterValue{Metric: s.m, Series: b.series, Value: v})
		case KindGauge:
			i := s.m.GaugeIndex()
			r.gsum[i] += v
			r.gcnt[i]++
		case KindHistogram:
			h := &o.Histograms[s.m.HistogramIndex()]
			h.Present = true
			switch b.part {
			case partBucket:
				nanLE = nanLE || math.IsNaN(b.le)
				h.addAt(b.le, v, &b.bucket, !nanLE)
			case partSum:
				h.Sum += v
				h.HasSum = true
			case partCount:
				h.Count += v
				h.HasCount = true
			}
		}
	}
	for i := range o.Histograms {
		h := &o.Histograms[i]
		if n := len(h.Buckets); h.Present && !h.HasCount && n > 0 && math.IsInf(h.Buckets[n-1].UpperBound, 1) {
			h.Count = h.Buckets[n-1].Count
		}
	}
	for i, n := range r.gcnt {
		if n == 0 {
			continue
		}
		o.HasGauges[i] = true
		o.Gauges[i] = r.gsum[i]
		if GaugeAt(i).averaged() {
			o.Gauges[i] /= float64(n)
		}
	}
	if r.explain {
		r.fillIgnored(o)
	}
	return nil
}

func (r *Reader) resolve(o *Observation, engines uint64, roles [2]bool) error {
	switch {
	case r.engine != EngineAuto:
		o.Engine = r.engine
	case bits.OnesCount64(engines) > 1:
		return r.mixed(engines)
	case engines != 0:
		o.Engine = r.adapters[bits.TrailingZeros64(engines)].Engine
	default:
		switch {
		case r.claimed == 0:
			return r.noEngine()
		case bits.OnesCount64(r.claimed) > 1:
			return r.mixed(r.claimed)
		}
		o.Engine = r.adapters[bits.TrailingZeros64(r.claimed)].Engine
	}
	if r.role != RoleUnknown {
		o.Role = r.role
		return nil
	}
	if r.frontend(o.Engine) {
		// A router's own names say what it is.
		o.Role = Router
		return nil
	}
	err := r.roleFromLabels(o, roles)
	if err != nil && r.explain {
		// Inspecting one exposition: say what is missing, show the rest.
		o.Notes = append(o.Notes, err.Error())
		return nil
	}
	return err
}

func (r *Reader) roleFromLabels(o *Observation, roles [2]bool) error {
	switch {
	case roles[0] && roles[1]:
		return fmt.Errorf("%w: the exposition has both engine_type=\"prefill\" and \"decode\" series; set the target's role", ErrRole)
	case roles[0]:
		o.Role = Prefill
	case roles[1]:
		o.Role = Decode
	default:
		return fmt.Errorf("%w: set role: prefill|decode for this target (the exposition has no engine_type=\"prefill\"/\"decode\" label)", ErrRole)
	}
	return nil
}

func (r *Reader) addNote(n string) {
	for _, have := range r.obs.Notes {
		if have == n {
			return
		}
	}
	r.obs.Notes = append(r.obs.Notes, n)
}

// add adds v to the bucket of le and returns the bucket's index.
func (h *Histogram) add(le, v float64) int {
	for i := range h.Buckets {
		if h.Buckets[i].UpperBound == le {
			h.Buckets[i].Count += v
			return i
		}
	}
	h.Buckets = append(h.Buckets, Bucket{UpperBound: le, Count: v})
	// Keep the buckets sorted; exposition order is ascending, so this is rare.
	i := len(h.Buckets) - 1
	for ; i > 0 && h.Buckets[i].UpperBound < h.Buckets[i-1].UpperBound; i-- {
		h.Buckets[i], h.Buckets[i-1] = h.Buckets[i-1], h.Buckets[i]
	}
	return i
}

// addAt is add with a hint, where the bucket of le was in the last read:
// a histogram's buckets come in the same order every read, so the search
// is needed only when they change.
//
// sorted says no NaN bound was added, which add cannot sort.
func (h *Histogram) addAt(le, v float64, hint *int32, sorted bool) {
	i, n := int(*hint), len(h.Buckets)
	switch {
	case i < n && h.Buckets[i].UpperBound == le:
		h.Buckets[i].Count += v
		return
	case sorted && i == n && (n == 0 || h.Buckets[n-1].UpperBound < le):
		// The first engine's buckets, in order: the buckets are sorted,
		// so one past the largest is new.
		h.Buckets = append(h.Buckets, Bucket{UpperBound: le, Count: v})
		return
	}
	*hint = int32(h.add(le, v))
}

func (r *Reader) fillIgnored(o *Observation) {
	for fam, why := range r.ignored {
		o.Ignored = append(o.Ignored, Ignored{Family: fam, Reason: why})
	}
	for m := Metric(0); m < numMetrics; m++ {
		if !r.primary[m] {
			continue
		}
		for _, s := range r.staged {
			if s.m == m && s.b.fallback {
				o.Ignored = append(o.Ignored, Ignored{Family: s.b.family, Reason: "deprecated name; the current name is present and read instead"})
				break
			}
		}
	}
	sort.Slice(o.Ignored, func(i, j int) bool { return o.Ignored[i].Family < o.Ignored[j].Family })
	clear(r.ignored)
}

// Evict forgets the series not seen in the last n reads, failed reads
// included (a read that stopped at MaxSeries still marks what it saw). The
// caller decides when; a cache full of churned series otherwise fails every
// read from then on.
func (r *Reader) Evict(n uint32) {
	if n > 0 && r.touched == len(r.cache) {
		return // every entry was seen in this read
	}
	for k, b := range r.cache {
		if r.gen-b.gen >= n {
			delete(r.cache, k)
		}
	}
	r.forget()
}

// forget drops the evicted bindings from the order.
func (r *Reader) forget() {
	for i, b := range r.order {
		if b != nil && r.cache[b.key] != b {
			r.order[i] = nil
		}
	}
	if len(r.order) > len(r.cache) && len(r.order) > r.pos {
		r.order = r.order[:max(r.pos, len(r.cache))]
	}
}

// Cached returns the number of series in the cache (at most MaxSeries).
func (r *Reader) Cached() int { return len(r.cache) }

// evict forgets series not seen in the last 16 reads, so a target whose
// label values churn cannot grow the cache without bound.
func (r *Reader) evict() {
	if r.touched == len(r.cache) {
		return
	}
	for k, b := range r.cache {
		if r.gen-b.gen > 16 {
			delete(r.cache, k)
		}
	}
	r.forget()
}

func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

// orList writes "a, b or c".
func orList(items []string) string {
	if n := len(items); n > 1 {
		return strings.Join(items[:n-1], ", ") + " or " + items[n-1]
	}
	return strings.Join(items, "")
}

// frontend reports whether engine e's adapter is a request router, which
// plays no P/D role.
func (r *Reader) frontend(e Engine) bool {
	for _, a := range r.adapters {
		if a.Engine == e {
			return a.Frontend
		}
	}
	return false
}
