package engine

import (
	"strconv"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// part says which sample of a metric a series carries.
type part uint8

const (
	partValue part = iota
	partBucket
	partSum
	partCount
)

// KVSource names the connector a KV-bytes series comes from.
type KVSource string

const (
	KVAuto     KVSource = ""
	KVFlagCX   KVSource = "flagcx"
	KVNIXL     KVSource = "nixl"
	KVMooncake KVSource = "mooncake"
	KVSGLang   KVSource = "sglang"
	KVDynamo   KVSource = "dynamo"
	KVNone     KVSource = "none"
)

// ParseKVSource accepts the connector names ptdmon reads.
func ParseKVSource(s string) (KVSource, bool) {
	switch k := KVSource(s); k {
	case KVAuto, KVFlagCX, KVNIXL, KVMooncake, KVSGLang, KVDynamo, KVNone:
		return k, true
	case "auto":
		return KVAuto, true
	}
	return KVAuto, false
}

// binding is what one raw series means. It is computed once per series and
// cached by the series' raw text, so steady-state scrapes allocate nothing.
type binding struct {
	use      bool
	metric   Metric
	part     part
	le       float64 // bucket upper bound, in the canonical unit
	scale    float64 // multiplies the value into the canonical unit
	group    uint64  // DP group / engine index / process: groups add up
	rank     int32   // TP/PP rank; only the lowest rank of a group counts; -1 none
	fallback bool    // deprecated name, used only when the current name is absent
	series   uint64  // identity of the source series (labels hash)
	engine   Engine
	role     Role
	kv       KVSource
	model    string
	family   string // for ptdmon inspect
	why      string // why the series is not used
	note     bool   // the reason is worth telling the user on every scrape
	mtype    model.MetricType
	gen      uint32 // last read that saw the series, for eviction
}

// rule maps an engine metric name to its canonical meaning.
type rule struct {
	metric   Metric
	scale    float64
	fallback bool
	kv       KVSource
	leScale  float64 // for histograms exported in other units than seconds
}

// declared reports whether a sample declared as t may be read as want;
// untyped samples (no # TYPE line) are read by their name.
func declared(t, want model.MetricType) bool { return t == want || t == model.MetricTypeUnknown }

func wrongType(family string, want, t model.MetricType) binding {
	return skip(family, "expected a "+string(want)+", the exposition declares "+string(t))
}

// plain maps a counter or gauge through an engine's tables; ok is false when
// name is in neither. finished, if set, re-routes completion series by their
// finished_reason label (aborted and failed requests are not completions).
func plain(b binding, name string, t model.MetricType, ls labels.Labels, counters, gauges map[string]rule, finished func(reason string) (Metric, bool)) (binding, bool) {
	if r, ok := counters[name]; ok {
		if !declared(t, model.MetricTypeCounter) {
			return wrongType(name, model.MetricTypeCounter, t), true
		}
		if r.metric == Completed && finished != nil {
			if m, other := finished(ls.Get("finished_reason")); other {
				r.metric = m
			}
		}
		return bind(b, r, partValue, ls), true
	}
	if r, ok := gauges[name]; ok {
		if !declared(t, model.MetricTypeGauge) {
			return wrongType(name, model.MetricTypeGauge, t), true
		}
		return bind(b, r, partValue, ls), true
	}
	return b, false
}

// skip builds a binding for a series that is not used, with the reason.
func skip(family, why string) binding {
	return binding{family: family, why: why}
}

// splitHistogram strips a histogram suffix from name.
func splitHistogram(name string) (base string, p part, ok bool) {
	for _, s := range [...]struct {
		suffix string
		p      part
	}{{"_bucket", partBucket}, {"_sum", partSum}, {"_count", partCount}} {
		if n := len(name) - len(s.suffix); n > 0 && name[n:] == s.suffix {
			return name[:n], s.p, true
		}
	}
	return name, partValue, false
}

// bind completes a binding for a series matched by rule r.
func bind(b binding, r rule, p part, ls labels.Labels) binding {
	b.use = true
	b.metric = r.metric
	b.part = p
	b.scale = 1
	if r.scale != 0 {
		b.scale = r.scale
	}
	b.fallback = r.fallback
	b.kv = r.kv
	b.series = ls.Hash()
	if p == partBucket {
		le, err := parseLE(ls.Get(model.BucketLabel))
		if err != nil {
			return skip(b.family, "bucket without a valid le label")
		}
		if r.leScale != 0 {
			le *= r.leScale
		}
		b.le = le
	}
	if p == partSum && r.leScale != 0 && r.metric.Kind() == KindHistogram {
		b.scale = r.leScale
	}
	return b
}

func parseLE(s string) (float64, error) {
	if s == "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(s, 64)
}

// hashString gives a stable group id for a label value.
func hashString(h uint64, s string) uint64 {
	const prime = 1099511628211
	if h == 0 {
		h = 14695981039346656037
	}
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	h ^= 0xff
	h *= prime
	return h
}
