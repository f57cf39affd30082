package sim

import (
	"fmt"
	"strings"
)

// PtdmonYAML is a ptdmon.yaml that watches the running cluster, with the
// ground-truth URL in a comment.
func (c *Cluster) PtdmonYAML(seed int64) string {
	sc := c.Scenario()
	var b strings.Builder
	fmt.Fprintf(&b, "# ptdmon.yaml for the simulated cluster: scenario %q, seed %d.\n", sc.Name, seed)
	fmt.Fprintf(&b, "# Ground truth (exact cumulative counts, ?at=<unix-ns> or ?from=&to=): %s\n", c.TruthURL())
	fmt.Fprintf(&b, "kv_bytes_per_request: %d\n", c.BytesPerRequest())
	// Groups of their own model are pools with their own B_request
	// (docs/pools.md).
	pools := map[string]int64{}
	var names []string
	for _, g := range sc.Groups {
		if m := g.ModelOf(sc); g.Model != "" || g.KVBytesPerRequest > 0 {
			if _, seen := pools[m]; !seen {
				names = append(names, m)
			}
			pools[m] = g.BytesPerRequest(sc)
		}
	}
	if len(names) > 0 {
		b.WriteString("pools:\n")
		for _, m := range names {
			fmt.Fprintf(&b, "  %q: {kv_bytes_per_request: %d}\n", m, pools[m])
		}
	}
	b.WriteString("targets:\n")
	for _, t := range c.Targets() {
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    role: %s\n    engine: %s\n", t.Name, t.URL, t.Role, t.Engine)
		// The batch limit no engine exports (docs/advisor.md#decode-batch).
		if n := c.MaxNumSeqs(t.Name); n > 0 {
			fmt.Fprintf(&b, "    labels: {ptd_max_num_seqs: \"%d\"}\n", n)
		}
		if len(t.ForwardPassMetrics) > 0 {
			fmt.Fprintf(&b, "    forward_pass_metrics: [\"%s\"]\n", strings.Join(t.ForwardPassMetrics, `", "`))
		}
	}
	return b.String()
}
