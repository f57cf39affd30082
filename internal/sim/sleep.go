package sim

import (
	"fmt"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// validAsleep checks Scenario.Asleep: known vLLM instances (the engine that
// exports its sleep state), each once, and every group keeping an instance
// of each role awake to serve.
func (sc Scenario) validAsleep(known map[string]bool, bad func(path, format string, a ...any) error) error {
	seen := map[string]bool{}
	for i, name := range sc.Asleep {
		p := fmt.Sprintf("asleep[%d]", i)
		switch {
		case !known[name]:
			return bad(p, "unknown instance %q", name)
		case seen[name]:
			return bad(p, "%q is listed twice", name)
		}
		seen[name] = true
	}
	for _, g := range sc.Groups {
		for _, r := range [...]struct {
			tag string
			n   int
		}{{"p", g.Prefill.Instances}, {"d", g.Decode.Instances}} {
			asleep := 0
			for i := 0; i < r.n; i++ {
				if seen[fmt.Sprintf("%s-%s%d", g.Name, r.tag, i)] {
					asleep++
				}
			}
			switch {
			case asleep > 0 && g.Engine != string(ptd.VLLM):
				return bad("asleep", "group %s is %s: only vLLM exports its sleep state", g.Name, g.Engine)
			case asleep > 0 && asleep == r.n:
				return bad("asleep", "every %s-%s instance of group %s is asleep: none would serve", g.Name, r.tag, g.Name)
			}
		}
	}
	return nil
}
