package config

import (
	"strings"
	"testing"
)

// TestSyntaxErrorLine: an indentation mistake is reported at the line to
// fix, not where the enclosing block starts.
func TestSyntaxErrorLine(t *testing.T) {
	f := func(name, doc, want string) {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(doc), "ptdmon.yaml")
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("err = %v, want prefix %q", err, want)
			}
		})
	}
	f("key indented one space short", "interval: 1s\ntargets:\n  - name: p0\n    url: http://h:1/metrics\n   role: prefill\n",
		"ptdmon.yaml:5: did not find expected '-' indicator")
	f("key back at the item's column", "interval: 1s\ntargets:\n  - name: p0\n    url: http://h:1/metrics\n  role: prefill\n",
		"ptdmon.yaml:5: did not find expected '-' indicator")
	f("key indented too far", "interval: 1s\ntargets:\n  - name: p0\n    url: http://h:1/metrics\n      role: prefill\n",
		"ptdmon.yaml:5: mapping values are not allowed")
	f("mapping, deeper", "model:\n  config: c.json\n  seq_len: 8192\n kv_dtype: bf16\nwindow: 5s\n",
		"ptdmon.yaml:4:")
	f("unknown key keeps its line", "interval: 1s\ntargets:\n  - name: p0\n    url: http://h:1/metrics\n    rol: prefill\n",
		"ptdmon.yaml:5: field rol not found")
}
