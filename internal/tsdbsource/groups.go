package tsdbsource

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// Labels the generated scrape configuration attaches to every engine
// series (internal/gen, scrape.go); targets are discovered from them.
const (
	LabelTarget = "ptd_target"
	LabelRole   = "ptd_role"
	LabelEngine = "ptd_engine"
)

// textFormat is the content type of the expositions assembled from query
// results for the engine adapters.
const textFormat = "text/plain; version=0.0.4"

// group is one query: every raw name of one canonical metric, for every
// target at once.
type group struct {
	metric string // canonical name, or the raw name when unclassified
	names  []string
	hist   []string // histogram families: _sum and _count are read
	// buckets: the group is a latency histogram, read bucket by bucket.
	buckets bool
}

// selector is the group's series selector, limited to engine targets.
func (g group) selector() string {
	alts := make([]string, 0, len(g.names)+len(g.hist))
	for _, n := range g.names {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	suffix := "_(?:sum|count)"
	if g.buckets {
		suffix = "_(?:bucket|sum|count)"
	}
	for _, n := range g.hist {
		alts = append(alts, regexp.QuoteMeta(n)+suffix)
	}
	return "{__name__=~" + strconv.Quote(strings.Join(alts, "|")) + "," + LabelTarget + `!=""}`
}

// healthSelector reads the TSDB's own record of each scrape: up and its
// duration, written in the same commit as the scrape's samples.
const healthSelector = `{__name__=~"up|scrape_duration_seconds",` + LabelTarget + `!=""}`

// metricGroups sorts the names the engine adapters read into one group per
// canonical metric. The adapters themselves say what each name means, so the
// queries follow them when they learn a new name. Latency histograms are
// read only with histograms set: their buckets are most of an engine's
// series, and the stage rates, queues and verdict do not need them.
func metricGroups(histograms bool) []group {
	latency := map[string]bool{}
	for i := range engine.NumHistograms {
		latency[engine.HistogramAt(i).String()] = true
	}
	byMetric := map[string]*group{}
	for _, name := range engine.KnownNames() {
		metric, hist, known := classify(name)
		if latency[metric] && !histograms {
			continue
		}
		if !known {
			// Queried on its own, buckets included: it may be either.
			metric = "unclassified " + name
		}
		g, ok := byMetric[metric]
		if !ok {
			g = &group{metric: metric, buckets: latency[metric] || !known}
			byMetric[metric] = g
		}
		if hist {
			g.hist = append(g.hist, name)
		} else {
			g.names = append(g.names, name)
		}
	}
	out := make([]group, 0, len(byMetric))
	for _, g := range byMetric {
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].metric < out[j].metric })
	return out
}

// classify reads name as a one-line exposition, then as a histogram, and
// reports the canonical metric the adapters make of it.
func classify(name string) (metric string, hist, known bool) {
	if m, ok := canonical(name + " 1\n"); ok {
		return m, false, true
	}
	body := name + "_bucket{le=\"+Inf\"} 1\n" + name + "_sum 1\n" + name + "_count 1\n"
	if m, ok := canonical(body); ok {
		return m, true, true
	}
	// Unknown to a bare read (it needs labels to be told apart): query it
	// on its own, in both forms.
	return name, true, false
}

func canonical(body string) (string, bool) {
	for _, role := range []engine.Role{engine.Prefill, engine.Decode} {
		r := engine.NewReader(engine.EngineAuto, role, engine.KVAuto)
		o, err := r.Read([]byte(body), textFormat)
		if err != nil {
			continue
		}
		if len(o.Counters) > 0 {
			return o.Counters[0].Metric.String(), true
		}
		for i, has := range o.HasGauges {
			if has {
				return engine.GaugeAt(i).String(), true
			}
		}
		for i, h := range o.Histograms {
			if h.Present {
				return engine.HistogramAt(i).String(), true
			}
		}
	}
	return "", false
}
