package slo

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// UnmarshalYAML reads the thresholds of ptdmon.yaml's slo: each in seconds
// (0.5) or as a duration (500ms), the way the file gives its other times;
// an unknown key is an error that names the known ones.
func (t *Thresholds) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: slo: want a mapping of ttft, itl and e2e", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var dst *float64
		switch k.Value {
		case "ttft":
			dst = &t.TTFT
		case "itl":
			dst = &t.ITL
		case "e2e":
			dst = &t.E2E
		default:
			return fmt.Errorf("line %d: slo.%s: unknown key (want ttft, itl or e2e)", k.Line, k.Value)
		}
		var x float64
		if err := v.Decode(&x); err != nil {
			d, derr := time.ParseDuration(v.Value)
			if derr != nil || v.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: slo.%s %q: want seconds (0.5) or a duration (500ms)", v.Line, k.Value, v.Value)
			}
			x = d.Seconds()
		}
		*dst = x
	}
	return nil
}
