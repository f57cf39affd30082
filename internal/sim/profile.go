package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// A Profile is everything the simulator knows about one engine: how it
// prints its metrics and where its P/D protocol differs from other
// engines'. The model itself is shared; it asks the group's profile at each
// point where engines differ. Each engine registers its profile from its own
// file (profile_vllm.go, profile_sglang.go, profile_trtllm.go), keyed by the
// engine's name from internal/engine, so an engine registered there plus a
// profile here can be simulated with no other change.
type Profile struct {
	// Engine is the adapter's engine name (engine.VLLM, …).
	Engine ptd.Engine
	// Format writes the engine's Prometheus exposition.
	Format Format
	// Connectors are the KV connectors a group of this engine may name;
	// the first is used when a group names none.
	Connectors []string
	// ConnectorRequired: a group must name its connector, because the
	// engine's connectors are alternatives of equal standing (vLLM).
	ConnectorRequired bool
	// MetricsPath is where the exposition is served; "" means /metrics.
	MetricsPath string
	// IterationStats: the worker also keeps TensorRT-LLM's JSON iteration
	// statistics (served at /metrics, drained on read) and per-request
	// perf records (iterstats.go, perfrecords.go).
	IterationStats bool

	// PreallocFirst: decode reserves the request's KV slot before prefill
	// may start, and prefill pushes the KV as soon as it is done (SGLang's
	// bootstrap handshake). Otherwise the request is handed to a decode
	// engine once prefill has run, and its KV waits on P until that engine
	// has allocated a slot (vLLM's proxy, trtllm-serve disaggregated).
	PreallocFirst bool
	// SplitLegs: the router sends each request as two: a prefill leg
	// (max_tokens=1) that finishes on P right after prefill and counts among
	// P's completions, and a decode leg submitted to D when P answered, whose
	// latencies start then. Otherwise one request spans both engines: P
	// counts it once its KV has left, and D times it from its arrival.
	SplitLegs bool
	// EngineCountsKVFailures: failed KV transfers and bootstraps are the
	// engine's own counters (SGLang's num_transfer_failed_reqs,
	// num_bootstrap_failed_reqs) rather than the connector's per-thread
	// stats.
	EngineCountsKVFailures bool
	// RecomputesFailedLoads: when a KV load fails, decode computes the
	// request's prompt itself (vLLM's kv_load_failure_policy "recompute"),
	// so a group may set failures (docs/sim.md#failed-kv-loads).
	RecomputesFailedLoads bool
	// PrefillStages: a prefill engine times each request's stages
	// (bootstrap, waiting, forward, KV hand-off) into EngineStats.Stages as
	// its KV leaves, for the format to print (SGLang's
	// per_stage_req_latency_seconds).
	PrefillStages bool
	// NoDecodeOnly: requests sent straight to decode
	// (Group.DecodeOnlyFraction) are not simulated for the engine.
	NoDecodeOnly bool
	// Traces is the shape of the spans the engine's tracing exports, which
	// SendTraces posts; NoTraces leaves its requests untraced.
	Traces TraceShape

	// Histograms gives a new engine process's histograms their bucket
	// layouts (the `le` values are part of the wire format). Nil leaves them
	// without buckets: sum and count only.
	Histograms func(*EngineStats)
	// OnTransfer records one completed KV copy in what the engine exports
	// beside the connector's counters: exporter is the engine whose
	// connector counts the copy, prefill the one that sent it. Nil records
	// nothing more.
	OnTransfer func(exporter, prefill *EngineStats, x Transfer)
}

// TraceShape is the shape of the spans an engine exports for a request.
type TraceShape uint8

// The trace shapes (docs/engines.md#traces).
const (
	NoTraces TraceShape = iota
	// LLMRequestSpans: vLLM's, one llm_request span per leg behind a P/D
	// proxy's span, plus a KV-transfer span (vllm/tracing).
	LLMRequestSpans
	// StageSliceSpans: SGLang's, per engine a root span from the API
	// server and a scheduler thread span with the stage slices under it,
	// in two exports.
	StageSliceSpans
)

// Transfer is one completed KV copy.
type Transfer struct {
	Bytes       int64
	Duration    time.Duration
	Descriptors int
}

// profiles holds the registered profiles. Registration happens at init; a
// model looks up its groups' profiles once, when it is built.
var profiles struct {
	sync.RWMutex
	m map[ptd.Engine]*Profile
}

// RegisterProfile adds an engine's profile. It panics on a bad profile, as
// engine.Register does: profiles are registered at init, so a mistake shows
// up in every test.
func RegisterProfile(p Profile) {
	if p.Engine == ptd.EngineAuto || p.Format == nil || len(p.Connectors) == 0 {
		panic("sim: a profile needs an engine name, a format and at least one connector")
	}
	if p.IterationStats && p.metricsPath() == "/metrics" {
		panic("sim: iteration statistics take /metrics; the exposition needs another MetricsPath")
	}
	profiles.Lock()
	defer profiles.Unlock()
	if _, dup := profiles.m[p.Engine]; dup {
		panic(fmt.Sprintf("sim: profile %s registered twice", p.Engine))
	}
	if profiles.m == nil {
		profiles.m = map[ptd.Engine]*Profile{}
	}
	p.Connectors = slices.Clone(p.Connectors)
	profiles.m[p.Engine] = &p
}

// UnregisterProfile removes an engine's profile, for tests that register
// one of their own.
func UnregisterProfile(e ptd.Engine) {
	profiles.Lock()
	defer profiles.Unlock()
	delete(profiles.m, e)
}

// profileFor returns the profile of the engine a group names, or nil.
func profileFor(name string) *Profile {
	profiles.RLock()
	defer profiles.RUnlock()
	return profiles.m[ptd.Engine(name)]
}

// FormatFor returns the Format of an engine name, or nil.
func FormatFor(name string) Format {
	if p := profileFor(name); p != nil {
		return p.Format
	}
	return nil
}

// profileEngines lists the engines with a profile, in the order the engine
// registry shows them (then by name), for messages.
func profileEngines() []string {
	profiles.RLock()
	defer profiles.RUnlock()
	order := ptd.Engines()
	rank := func(e ptd.Engine) int {
		if i := slices.Index(order, e); i >= 0 {
			return i
		}
		return len(order)
	}
	var es []ptd.Engine
	for e := range profiles.m {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b ptd.Engine) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	return out
}

// connector is the group's connector, or the profile's default when the
// group names none.
func (p *Profile) connector(named string) string {
	if named == "" && p != nil {
		return p.Connectors[0]
	}
	return named
}

// metricsPath is where the exposition is served.
func (p *Profile) metricsPath() string {
	if p == nil || p.MetricsPath == "" {
		return "/metrics"
	}
	return p.MetricsPath
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
