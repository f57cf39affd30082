package engine

import (
	"maps"
	"slices"
)

// Target is one engine instance to read, whoever names it: the
// configuration (config.Target.Resolve), file_sd, a TSDB's series or the
// simulator. The scheduler scrapes it, the ledger keeps its state under
// Name, and the generators write it into Prometheus' scrape configuration.
type Target struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// Role is RoleUnknown when the exposition says it (SGLang's
	// engine_type label).
	Role Role `json:"role"`
	// Engine is EngineAuto when detected from the metric prefixes.
	Engine Engine            `json:"engine"`
	Labels map[string]string `json:"labels,omitempty"`
	// IterationStats: URL serves TensorRT-LLM's JSON iteration statistics
	// instead of a Prometheus exposition.
	IterationStats bool `json:"iteration_stats,omitempty"`
	// ForwardPassMetrics are the ZeroMQ endpoints (tcp://host:port, one
	// per DP rank) where the instance publishes its forward-pass metrics,
	// read beside URL for its busy time (internal/fpm).
	ForwardPassMetrics []string `json:"forward_pass_metrics,omitempty"`
}

// Equal reports whether t and u are the same target, labels included.
func (t Target) Equal(u Target) bool {
	return t.Name == u.Name && t.URL == u.URL && t.Role == u.Role && t.Engine == u.Engine &&
		t.IterationStats == u.IterationStats && maps.Equal(t.Labels, u.Labels) &&
		slices.Equal(t.ForwardPassMetrics, u.ForwardPassMetrics)
}
