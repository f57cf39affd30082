package engine

import (
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// claim returns the index of the adapter that owns a sample name, -1 if
// none: first by prefix, then (for adapters whose prefix is optional) by a
// bare name listed in their table.
func claim(adapters []*adapter, name string) int {
	for i, a := range adapters {
		if !a.Listed && strings.HasPrefix(name, a.Prefix) {
			return i
		}
	}
	base, _, _ := splitHistogram(name)
	for i, a := range adapters {
		if !a.PrefixOptional && !a.Listed {
			continue
		}
		if _, ok := a.plain[name]; ok {
			return i
		}
		if _, ok := a.hist[base]; ok {
			return i
		}
	}
	return -1
}

// lookup finds name in m, also without the adapter's optional prefix
// (families exposed bare in the table, such as TensorRT-LLM's front
// server, may still carry the prefix).
func (a *adapter) lookup(m map[string]*Family, name string) *Family {
	if f, ok := m[name]; ok {
		return f
	}
	if a.PrefixOptional {
		if bare, ok := strings.CutPrefix(name, a.Prefix); ok {
			return m[bare]
		}
	}
	return nil
}

// bind maps one series of a's families through its table and label rules.
// role is the target's configured role.
func (a *adapter) bind(full string, t model.MetricType, ls labels.Labels, role Role) binding {
	b := binding{engine: a.Engine, rank: -1, family: full}
	if a.ModelLabel != "" {
		if b.model = ls.Get(a.ModelLabel); b.model == a.Unset && a.Unset != "" {
			b.model = ""
		}
	}
	if a.RoleLabel != "" {
		switch ls.Get(a.RoleLabel) {
		case "prefill":
			b.role = Prefill
		case "decode":
			b.role = Decode
		}
	}
	for _, l := range a.SplitLabels {
		if ls.Get(l) != "" {
			return skip(full, "per-"+l+" series; the totals are the series with "+l+"=\"\"")
		}
	}
	for _, l := range a.GroupLabels {
		b.group = hashString(b.group, ls.Get(l))
	}
	if len(a.GroupLabels) == 0 {
		b.group = hashString(0, "")
	}
	if a.RankLabels != nil {
		rank, any := 0, false
		for i, l := range a.RankLabels {
			v := ls.Get(l)
			any = any || v != ""
			rank |= atoiOr(v, 0) << (16 * i)
		}
		if any {
			b.rank = int32(rank)
		}
	}

	if f := a.lookup(a.plain, full); f != nil {
		return a.bindPlain(b, f, full, t, ls, role)
	}
	base, p, isHist := splitHistogram(full)
	if !isHist {
		return skip(full, "not used by ptdmon")
	}
	b.family = base
	if !declared(t, model.MetricTypeHistogram) {
		return wrongType(base, model.MetricTypeHistogram, t)
	}
	f := a.lookup(a.hist, base)
	switch {
	case f == nil:
		return skip(base, "not used by ptdmon")
	case f.Skip != "":
		return skipNote(base, f)
	case f.ByLabel != "":
		m, fallback, ok := f.byValue(ls)
		if !ok {
			return skip(base, f.ByLabel+"=\""+ls.Get(f.ByLabel)+"\" is not read")
		}
		b = set(b, f, m, f.Scale, p, ls)
		b.fallback = b.fallback || fallback
		return b
	case f.Sizes:
		switch p {
		case partSum:
			return set(b, f, f.Metric, f.Scale, partValue, ls)
		case partCount:
			return set(b, f, f.Count, 1, partValue, ls)
		}
		return skip(base, "per-transfer size buckets are not needed; _sum and _count are read")
	}
	return set(b, f, f.Metric, f.Scale, p, ls)
}

// bindPlain maps a counter or gauge series.
func (a *adapter) bindPlain(b binding, f *Family, full string, t model.MetricType, ls labels.Labels, role Role) binding {
	if f.Skip != "" {
		return skipNote(full, f)
	}
	if f.Role != RoleUnknown {
		switch role {
		case RoleUnknown:
			return skip(full, "counts the "+string(f.Role)+" phase of a process that serves several roles: give the target a role")
		case f.Role:
		default:
			return skip(full, "counts the "+string(f.Role)+" phase; add this URL as a "+string(f.Role)+" target to read it")
		}
	}
	if !declared(t, f.Type) {
		return wrongType(full, f.Type, t)
	}
	m := f.Metric
	fallback := false
	if f.ByLabel != "" {
		var ok bool
		if m, fallback, ok = f.byValue(ls); !ok {
			return skip(full, f.ByLabel+"=\""+ls.Get(f.ByLabel)+"\" is not read")
		}
	}
	if len(f.FromLabels) > 0 {
		return fromLabels(b, f, ls)
	}
	alias := ""
	if f.Finished && a.FinishedLabel != "" {
		reason := ls.Get(a.FinishedLabel)
		for _, l := range a.FinishedAliases {
			if reason != "" {
				break
			}
			if reason = ls.Get(l); reason != "" {
				alias = l
			}
		}
		for _, r := range a.NotCompleted {
			if r.Value == reason {
				m = r.Metric
				break
			}
		}
	}
	b = set(b, f, m, f.Scale, partValue, ls)
	b.fallback = b.fallback || fallback
	if f.AlsoLabel != "" {
		v := ls.Get(f.AlsoLabel)
		for _, r := range f.AlsoValue {
			if r.Value == v {
				b.also, b.hasAlso = r.Metric, true
			}
		}
	}
	if alias != "" {
		b.note = true
		b.why = "the finish reason is read from the label " + alias + ", not " + a.FinishedLabel + ": aborted and failed requests are told apart by it"
	}
	return b
}

func skipNote(family string, f *Family) binding {
	b := skip(family, f.Skip)
	b.note = f.Note
	return b
}

// set completes a binding for a series of family f read as metric m.
func set(b binding, f *Family, m Metric, scale float64, p part, ls labels.Labels) binding {
	b.use = true
	b.metric = m
	b.part = p
	b.scale = 1
	if scale != 0 {
		b.scale = scale
	}
	b.fallback = f.Deprecated
	b.kv = f.KV
	b.series = ls.Hash()
	if p == partBucket {
		le, err := parseLE(ls.Get(model.BucketLabel))
		if err != nil {
			return skip(b.family, "bucket without a valid le label")
		}
		if f.LEScale != 0 {
			le *= f.LEScale
		}
		b.le = le
	}
	if p == partSum && f.LEScale != 0 && m.Kind() == KindHistogram {
		b.scale = f.LEScale
	}
	return b
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 0xffff {
		return def
	}
	return n
}

// byValue is the metric a series of a ByLabel family counts, and whether
// it is read only as a fallback (ByFallback).
func (f *Family) byValue(ls labels.Labels) (m Metric, fallback, ok bool) {
	v := ls.Get(f.ByLabel)
	for _, r := range f.ByValue {
		if r.Value == v {
			return r.Metric, false, true
		}
	}
	for _, r := range f.ByFallback {
		if r.Value == v {
			return r.Metric, true, true
		}
	}
	return 0, false, false
}

// fromLabels binds a series of an info gauge whose label values are the
// values read (Family.FromLabels).
func fromLabels(b binding, f *Family, ls labels.Labels) binding {
	for i, lv := range f.FromLabels {
		v, err := strconv.ParseFloat(ls.Get(lv.Label), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		b.lv[i], b.lvOK[i] = v, true
	}
	if !b.lvOK[0] && !b.lvOK[1] {
		return skip(f.Name, "no number in the labels "+labelList(f.FromLabels))
	}
	b = set(b, f, f.FromLabels[0].Metric, f.Scale, partValue, ls)
	b.fromLabels = true
	if len(f.FromLabels) > 1 {
		b.metric2 = f.FromLabels[1].Metric
	}
	return b
}

func labelList(lvs []LabelValue) string {
	var out []string
	for _, lv := range lvs {
		out = append(out, lv.Label)
	}
	return strings.Join(out, ", ")
}
