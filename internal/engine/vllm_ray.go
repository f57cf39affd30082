package engine

import "strings"

// RayVLLM is vLLM under Ray Serve LLM or Ray Data LLM: vLLM's
// RayPrometheusStatLogger records vLLM's own metrics through
// ray.util.metrics (vllm-project/vllm PR #17925), and Ray's metrics agent on
// each node serves them with its ray_ prefix: ray_vllm:<name> as Ray's
// dashboards query them (ray-project/ray PR #52719), ray_vllm_<name> where
// the logger sanitises the colon (ray-project/ray PR #60385). The families
// are vLLM's, its KV connectors' included, under both spellings; replicas
// (ReplicaId) add up as vLLM's engines do. Ray also writes each counter
// without its _total (a legacy twin of the same count), which is not read.
const RayVLLM Engine = "ray-vllm"

// vllm_ray.go sorts after vllm.go and the connectors' files, so their
// tables are registered when this init runs.
func init() {
	v, ok := Lookup(VLLM)
	if !ok {
		panic("engine: vLLM's adapter is not registered before Ray's")
	}
	var fams []Family
	for _, f := range v.Families {
		name, ok := strings.CutPrefix(f.Name, "vllm:")
		if !ok {
			continue
		}
		for _, prefix := range []string{"ray_vllm:", "ray_vllm_"} {
			g := f
			g.Name = prefix + name
			fams = append(fams, g)
		}
	}
	r := v
	r.Engine, r.Aliases, r.Display, r.Order = RayVLLM, []string{"ray-serve-vllm"}, "vLLM under Ray", 11
	r.Prefix = "ray_vllm"
	r.GroupLabels = []string{"engine", "ReplicaId"}
	// Its latency histograms are vLLM's: the dashboards draw vLLM's.
	r.LatencyPanels = false
	r.Families = fams
	r.Mirror = VLLM
	Register(r)
}
