package engine

import (
	"strconv"
	"sync"

	"github.com/prometheus/common/model"
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

// Each connector's file declares its own; these two are not connectors.
const (
	KVAuto KVSource = ""     // every connector found
	KVNone KVSource = "none" // no KV bytes at all
)

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
	adapter  int8 // index in the Reader's adapters, -1 none
	role     Role
	kv       KVSource
	model    string
	family   string // for ptdmon inspect
	why      string // why the series is not used
	note     bool   // the reason is worth telling the user on every scrape
	mtype    model.MetricType
	// fromLabels: the values are lv (where lvOK), read as metric and
	// metric2, not the sample's value (Family.FromLabels).
	fromLabels bool
	metric2    Metric
	lv         [2]float64
	lvOK       [2]bool
	// also: the sample is read a second time as metric also
	// (Family.AlsoLabel).
	also    Metric
	hasAlso bool
}

// entry is one cached series of one target: what the series means, shared
// with every target that exports the same series text (the engines of one
// deployment serve one model with the same labels), and when the target
// last had it. A cached series costs a target a few words, not its text.
type entry struct {
	*meaning
	gen    uint32 // last read that saw the series, for eviction
	bucket int32  // a bucket's index in its histogram in the last read (Histogram.addAt)
}

// meaning is what one series text means: the fields that differ from
// series to series, and the binding it shares with the other series of
// its family (per-series fields zero).
type meaning struct {
	*binding
	le     float64
	group  uint64
	series uint64
	rank   int32
	role   Role
	model  string
	lv     [2]float64
	lvOK   [2]bool
	key    string // the raw series text
}

// split cuts b into its per-series fields and its family's meaning.
func split(b binding) (meaning, binding) {
	m := meaning{le: b.le, group: b.group, series: b.series, rank: b.rank, role: b.role, model: b.model, lv: b.lv, lvOK: b.lvOK}
	b.le, b.group, b.series, b.rank, b.role, b.model = 0, 0, 0, 0, RoleUnknown, ""
	b.lv, b.lvOK = [2]float64{}, [2]bool{}
	return m, b
}

// meanings holds one copy of every binding and meaning in use by any
// Reader. It is emptied when it grows past maxMeanings (label values that
// churn): entries keep the copies they have, only sharing is lost.
var meanings struct {
	sync.Mutex
	bindings map[binding]*binding
	series   map[meaning]*meaning
	// byText finds the meaning of a series text for Readers configured
	// alike, so a new target's first read does not build the labels of
	// series other targets already have.
	byText map[readerKey]map[string]*meaning
}

// readerKey is what a series' meaning depends on besides its text and type.
type readerKey struct {
	engine   Engine
	role     Role
	kv       KVSource
	adapters int
}

// maxMeanings bounds the shared table. Targets of one deployment export
// the same few thousand series texts, so sharing needs far fewer entries;
// label values that churn only refill it, and a small table keeps what they
// cost small.
const maxMeanings = 1 << 15

// known returns the meaning of series for Readers keyed k, if any.
func known(k readerKey, series []byte, t model.MetricType) *meaning {
	meanings.Lock()
	defer meanings.Unlock()
	if m := meanings.byText[k][string(series)]; m != nil && m.mtype == t {
		return m
	}
	return nil
}

// share returns the shared copy of m, whose binding is b, and files it
// under its text for Readers keyed k.
func share(k readerKey, m meaning, b binding) *meaning {
	meanings.Lock()
	defer meanings.Unlock()
	if meanings.series == nil || len(meanings.series) >= maxMeanings {
		meanings.bindings = make(map[binding]*binding)
		meanings.series = make(map[meaning]*meaning)
		meanings.byText = make(map[readerKey]map[string]*meaning)
	}
	pb, ok := meanings.bindings[b]
	if !ok {
		pb = &b
		meanings.bindings[b] = pb
	}
	m.binding = pb
	pm, ok := meanings.series[m]
	if !ok {
		pm = &m
		meanings.series[m] = pm
	}
	byText := meanings.byText[k]
	if byText == nil {
		byText = make(map[string]*meaning)
		meanings.byText[k] = byText
	}
	byText[pm.key] = pm
	return pm
}

// declared reports whether a sample declared as t may be read as want;
// untyped samples (no # TYPE line) are read by their name.
func declared(t, want model.MetricType) bool { return t == want || t == model.MetricTypeUnknown }

func wrongType(family string, want, t model.MetricType) binding {
	return skip(family, "expected a "+string(want)+", the exposition declares "+string(t))
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
