package gen

import (
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// keepNames are the sample names the engines scrape job keeps: every
// family of every registered engine adapter and KV connector (the tables
// the rules, dashboards, SLO rules and ptdmon's TSDB source read), a
// histogram with its _bucket, _sum and _count, and for an adapter whose
// prefix is optional the bare spelling too. A vLLM exposition is ~1,500
// series of which the rest (other histograms, _created, process_*,
// python_*) is never read: dropping it at scrape time is what keeps the
// 1 s rule group cheap at fleet size (docs/prometheus.md).
func keepNames() []string {
	var out []string
	for _, a := range engine.Adapters() {
		for _, f := range a.Families {
			names := []string{f.Name}
			if bare, ok := strings.CutPrefix(f.Name, a.Prefix); ok && a.Prefix != "" && a.PrefixOptional && !f.PrefixOnly {
				names = append(names, bare)
			}
			for _, n := range names {
				if f.Type == model.MetricTypeHistogram {
					out = append(out, n+"_bucket", n+"_sum", n+"_count")
				} else {
					out = append(out, n)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// keepRegex is keepNames as one anchored-by-Prometheus alternation.
// Prometheus relabels a series once and caches the outcome per scraped
// series, so the length of the alternation costs nothing per scrape.
func keepRegex() string {
	names := keepNames()
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = regexp.QuoteMeta(n)
	}
	return strings.Join(q, "|")
}

// engineMetricRelabel keeps only keepNames of what the engines expose.
func engineMetricRelabel() []relabelConfig {
	return []relabelConfig{{SourceLabels: []string{"__name__"}, Regex: keepRegex(), Action: "keep"}}
}
