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
	b.WriteString("targets:\n")
	for _, t := range c.Targets() {
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n    role: %s\n    engine: %s\n", t.Name, t.URL, t.Role, t.Engine)
	}
	return b.String()
}
