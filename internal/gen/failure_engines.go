package gen

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// engineFailureClassRules record the engines path's side of the failure
// classes: each model's KV failures by class, its transfers attempted and
// the share of decode's prompt tokens decode computed itself, read from the
// connectors' own families and classed as the adapters class them
// (engine.Metric.FailureClass), so that the ratios and alerts of
// failureClassRules fire on either path.
func engineFailureClassRules() []Rule {
	p := []string{"path", pathEngines}
	rate := func(s string) string { return rangeFn("rate", s, failureWindow) }
	part := func(a engine.Adapter, f engine.Family, suffix string) string {
		return series(perTarget("sum"), a, []engine.Family{f}, suffix, rate)
	}
	byClass := map[engine.FailureClass][]string{}
	var transfers []string
	for _, c := range engine.Connectors() {
		a, _ := engine.Lookup(c.Engine)
		for _, f := range a.Families {
			if f.KV != c.Source || f.Deprecated || f.Skip != "" {
				continue
			}
			switch {
			case f.Metric == engine.KVTransfers && f.ByLabel == "":
				transfers = append(transfers, part(a, f, ""))
			case f.Sizes && f.Count == engine.KVTransfers:
				// A size histogram counts one observation per transfer.
				transfers = append(transfers, part(a, f, "_count"))
			}
			for _, fc := range byFailureClass(f) {
				cls, _ := fc.Metric.FailureClass()
				if fc.ByLabel != "" {
					cls, _ = fc.ByValue[0].Metric.FailureClass()
				}
				byClass[cls] = append(byClass[cls], part(a, fc, ""))
			}
		}
	}
	var classes []string
	for _, m := range engine.FailureMetrics() {
		cls, _ := m.FailureClass()
		if parts := byClass[cls]; len(parts) > 0 {
			classes = append(classes, fmt.Sprintf(`label_replace(%s, "class", "%s", "", "")`, toTargetLabels("sum", union(parts...)), cls))
		}
	}
	var out []Rule
	// Lost notifications are not added to the attempts (engine.FailureClass.InTotal).
	failures := fmt.Sprintf(`sum by (model) (%s{path="%s",class!="%s"})`, modelFailures, pathEngines, engine.FailNotification)
	if len(classes) > 0 {
		out = append(out, record(modelFailures, sumBy("sum", "model, class", strings.Join(classes, " or ")), p...))
	}
	if len(transfers) > 0 {
		// Recorded first, so the attempts read the raw series once.
		out = append(out, record(modelTransfers, sumBy("sum", "model", toTargetLabels("sum", union(transfers...))), p...))
		t := fmt.Sprintf(`sum by (model) (%s{path="%s"})`, modelTransfers, pathEngines)
		out = append(out, record(modelAttempts, fmt.Sprintf("(%[1]s + %[2]s) or %[1]s or %[2]s", t, failures), p...))
	}
	if computed, prompt := decodePromptTokens(rate); computed != "" && prompt != "" {
		out = append(out, record(modelRecomputeRatio, fmt.Sprintf("%s / %s", computed, prompt), p...))
	}
	return out
}

// byFailureClass splits a family into one family per failure class it
// counts: itself where its metric has a class, or its label values
// grouped by class. Nil for a family that counts no failures.
func byFailureClass(f engine.Family) []engine.Family {
	if f.ByLabel == "" {
		if _, ok := f.Metric.FailureClass(); ok {
			return []engine.Family{f}
		}
		return nil
	}
	var out []engine.Family
	for _, m := range engine.FailureMetrics() {
		var rows []engine.Reason
		for _, r := range f.ByValue {
			if r.Metric == m {
				rows = append(rows, r)
			}
		}
		if len(rows) > 0 {
			g := f
			g.ByValue = rows
			out = append(out, g)
		}
	}
	return out
}

// decodePromptTokens are the engines path's prompt tokens per second over
// the failure window on decode instances, by model: those decode computed
// itself, and all of them. Empty where no adapter reads the metric.
func decodePromptTokens(rate func(string) string) (computed, prompt string) {
	var comp, all []string
	for _, a := range ruleAdapters() {
		for _, f := range a.Families {
			if f.Deprecated || f.Skip != "" || f.KV != engine.KVAuto || (f.Role != engine.RoleUnknown && f.Role != engine.Decode) {
				continue
			}
			g := f
			g.Role = engine.Decode
			switch {
			case f.ByLabel == "" && f.Metric == engine.PromptTokens:
				all = append(all, series(perTarget("sum"), a, []engine.Family{g}, "", rate))
			case f.ByLabel != "":
				var rows []engine.Reason
				for _, r := range f.ByValue {
					if r.Metric == engine.PromptTokensComputed {
						rows = append(rows, r)
					}
				}
				if len(rows) > 0 {
					g.ByValue = rows
					comp = append(comp, series(perTarget("sum"), a, []engine.Family{g}, "", rate))
				}
			}
		}
	}
	if len(comp) == 0 || len(all) == 0 {
		return "", ""
	}
	return sumBy("sum", "model", toTargetLabels("sum", union(comp...))), sumBy("sum", "model", toTargetLabels("sum", union(all...)))
}
