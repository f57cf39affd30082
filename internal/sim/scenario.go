package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// Roles and KV connectors used across the package, spelled as
// internal/engine spells them.
const (
	RolePrefill = string(ptd.Prefill)
	RoleDecode  = string(ptd.Decode)

	ConnectorFlagCX = string(ptd.KVFlagCX)
	ConnectorNIXL   = string(ptd.KVNIXL)
	// SGLang's Mooncake transfer backend (whose bytes SGLang counts
	// itself, engine.KVSGLang) and TensorRT-LLM's UCX cache transceiver
	// are transfer backends, not KV sources of internal/engine: these
	// names are the scenarios' own.
	ConnectorMooncake = "mooncake"
	ConnectorUCX      = "ucx"
)

// LlamaKVBytes is B_request of Llama-3.1-8B in bf16 at S=8192:
// 32 layers × 8 KV heads × 128 head dim × 2 (K,V) × 2 bytes × 8192 tokens.
const LlamaKVBytes int64 = 32 * 8 * 128 * 2 * 2 * 8192

// Scenario describes a simulated P/D deployment and its load.
type Scenario struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	// Bottleneck is the stage the scenario is built to saturate:
	// "none", "prefill", "kv" or "decode". Informational (shown in /truth).
	Bottleneck   string `yaml:"bottleneck" json:"bottleneck"`
	Model        string `yaml:"model" json:"model"`
	InputTokens  int    `yaml:"input_tokens" json:"input_tokens"`   // S
	OutputTokens int    `yaml:"output_tokens" json:"output_tokens"` // tokens generated on decode
	// KVBytesPerRequest is B_request: the KV payload one request ships from
	// prefill to decode.
	KVBytesPerRequest int64 `yaml:"kv_bytes_per_request" json:"kv_bytes_per_request"`
	// StopFraction of finished requests end with finished_reason="stop"
	// (the rest "length"); it only exercises label summing.
	StopFraction float64 `yaml:"stop_fraction" json:"stop_fraction"`
	// Jitter spreads every prefill batch's compute time and every KV copy's
	// duration uniformly over ±Jitter of its nominal value (mean unchanged),
	// as real kernels and links vary. Unset means DefaultJitter; 0 makes
	// them exact.
	Jitter   *float64  `yaml:"jitter" json:"jitter,omitempty"`
	Groups   []Group   `yaml:"groups" json:"groups"`
	Restarts []Restart `yaml:"restarts" json:"restarts"`
	Faults   Faults    `yaml:"faults" json:"faults"`
	// Asleep names vLLM instances in sleep mode (level 1: weights
	// offloaded) for the whole run: up, taking no traffic, and saying so in
	// vllm:engine_sleep_state; every other vLLM instance reports itself
	// awake.
	Asleep []string `yaml:"asleep" json:"asleep,omitempty"`
}

// Group is one P/D serving pool of a single engine kind: requests arriving to
// it are prefilled by its prefill instances and decoded by its decode
// instances (a P/D pair never mixes engines).
type Group struct {
	Name      string  `yaml:"name" json:"name"`           // instance name prefix
	Engine    string  `yaml:"engine" json:"engine"`       // an engine with a Profile: vllm | sglang | trtllm
	Connector string  `yaml:"connector" json:"connector"` // one of its profile's: vllm: flagcx | nixl; sglang: mooncake; trtllm: ucx
	Rate      float64 `yaml:"rate" json:"rate"`           // Poisson arrivals, requests/s
	// Burst makes the arrivals bursty at the same mean rate.
	Burst BurstSpec `yaml:"burst" json:"burst,omitzero"`

	// Model and KVBytesPerRequest make the group a pool of its own model
	// (docs/pools.md): the model_name its instances export and the B_request
	// its copies move. Empty or 0: the scenario's.
	Model             string `yaml:"model" json:"model,omitempty"`
	KVBytesPerRequest int64  `yaml:"kv_bytes_per_request" json:"kv_bytes_per_request,omitempty"`
	// PrefixHit makes some requests move only their uncached KV (prefix.go).
	PrefixHit PrefixHitSpec `yaml:"prefix_hit" json:"prefix_hit,omitzero"`

	// Router puts a router in front of the group ("llm-d-epp",
	// router.go); DecodeOnlyFraction of its requests skip prefill and the
	// KV transfer and go straight to decode.
	Router             string  `yaml:"router" json:"router,omitempty"`
	DecodeOnlyFraction float64 `yaml:"decode_only_fraction" json:"decode_only_fraction,omitempty"`
	// RouterDelay is the mean time, in seconds, each arrival spends in
	// the router before it is dispatched (router_time.go); 0 none.
	RouterDelay float64 `yaml:"router_delay" json:"router_delay,omitempty"`
	// MaxQueued sheds an arrival whose prefill engine already holds this
	// many requests waiting (shed.go); 0 sheds none.
	MaxQueued int `yaml:"max_queued" json:"max_queued,omitempty"`

	Prefill  PrefillSpec  `yaml:"prefill" json:"prefill"`
	Transfer TransferSpec `yaml:"transfer" json:"transfer"`
	Decode   DecodeSpec   `yaml:"decode" json:"decode"`

	// SGLang only: emit the pre-2026 gauge form of sglang:kv_transfer_total_mb
	// (no usable bytes counter) and the old bootstrap queue name
	// sglang:num_prefill_prealloc_queue_reqs.
	OldKVGauge     bool `yaml:"old_kv_gauge" json:"old_kv_gauge,omitempty"`
	OldQueueName   bool `yaml:"old_queue_name" json:"old_queue_name,omitempty"`
	OmitEngineType bool `yaml:"omit_engine_type" json:"omit_engine_type,omitempty"` // 2025 tokenizer metrics

	// TensorRT-LLM only (see profile_trtllm.go and iterstats.go).
	TRTLLM TRTLLMSpec `yaml:"trtllm" json:"trtllm,omitzero"`

	// vLLM over NIXL only: push (WRITE) mode (PR #57722), the prefill side
	// writes the KV and counts the transfers; decode only registers.
	NIXLPush bool `yaml:"nixl_push" json:"nixl_push,omitempty"`

	// vLLM only: no num_requests_waiting_by_reason, as before PR #38435.
	NoWaitingByReason bool `yaml:"no_waiting_by_reason" json:"no_waiting_by_reason,omitempty"`

	// vLLM only: KV loads that fail and decode recomputes (failures.go).
	Failures FailureSpec `yaml:"failures" json:"failures,omitzero"`
}

// TRTLLMSpec holds the TensorRT-LLM wire-format options of a group.
type TRTLLMSpec struct {
	// OldNames prints the pre-2026 collector: no trtllm_ prefix and only its
	// five families (request_success_total and four latency histograms).
	OldNames bool `yaml:"old_names" json:"old_names,omitempty"`
	// UndefinedLabels prints engine_type="undefined",model_name="undefined"
	// as stock trtllm-serve does when no labels are configured.
	UndefinedLabels bool `yaml:"undefined_labels" json:"undefined_labels,omitempty"`
	// IterStatsInterval builds one JSON iteration-stats record every N
	// iterations (iter_perf_stats_interval; 0 = 1).
	IterStatsInterval int `yaml:"iter_stats_interval" json:"iter_stats_interval,omitempty"`
	// IterStatsMax bounds the drained-on-read queue (0 = 1000); the oldest
	// records are dropped and counted in statsDroppedFrames.
	IterStatsMax int `yaml:"iter_stats_max" json:"iter_stats_max,omitempty"`
}

// BurstSpec makes arrivals bursty: in every Period, requests arrive only
// during its first Duty fraction, as a Poisson stream of Rate ÷ Duty, so the
// mean rate stays Rate. A zero Period means plain Poisson arrivals.
type BurstSpec struct {
	Period time.Duration `yaml:"period" json:"period,omitempty"`
	Duty   float64       `yaml:"duty" json:"duty,omitempty"`
}

// PrefillSpec sizes each prefill instance.
type PrefillSpec struct {
	Instances    int     `yaml:"instances" json:"instances"`
	DP           int     `yaml:"dp" json:"dp"`                         // engines per instance (vLLM engine=, SGLang dp_rank=)
	TokensPerSec float64 `yaml:"tokens_per_sec" json:"tokens_per_sec"` // prompt tokens/s of one engine
	MaxBatch     int     `yaml:"max_batch" json:"max_batch"`           // requests per prefill batch
	// KVSlots is how many requests' KV one engine can hold: the running
	// batch plus requests waiting for / in KV transfer (the inflight queue).
	KVSlots int `yaml:"kv_slots" json:"kv_slots"`
}

// TransferSpec sizes the KV link of each prefill engine.
type TransferSpec struct {
	BandwidthBytesPerSec float64 `yaml:"bandwidth_bytes_per_sec" json:"bandwidth_bytes_per_sec"`
	// Threads share the bandwidth equally; a request's KV is one copy on one
	// thread.
	Threads int `yaml:"threads" json:"threads"`
	// Descriptors per transfer; 0 = one per 16-token block.
	Descriptors int `yaml:"descriptors" json:"descriptors"`
}

// DecodeSpec sizes each decode instance.
type DecodeSpec struct {
	Instances int           `yaml:"instances" json:"instances"`
	DP        int           `yaml:"dp" json:"dp"`
	StepTime  time.Duration `yaml:"step_time" json:"step_time"` // one token for every running request
	// StepTimePerRequest is what each running request adds to a step (the
	// KV it reads): a step of n requests takes StepTime + n × this.
	StepTimePerRequest time.Duration `yaml:"step_time_per_request" json:"step_time_per_request,omitempty"`
	MaxBatch           int           `yaml:"max_batch" json:"max_batch"` // running requests
	KVSlots            int           `yaml:"kv_slots" json:"kv_slots"`   // resident requests: receiving + waiting + running
}

// Restart takes one instance down at At (since start) for Down; its process
// comes back with empty queues and counters at zero.
type Restart struct {
	Instance string        `yaml:"instance" json:"instance"`
	At       time.Duration `yaml:"at" json:"at"`
	Down     time.Duration `yaml:"down" json:"down"`
}

// Faults makes scrapes misbehave; the model itself is unaffected.
type Faults struct {
	TimeoutProb   float64       `yaml:"timeout_prob" json:"timeout_prob"`     // hang the response
	MalformedProb float64       `yaml:"malformed_prob" json:"malformed_prob"` // truncate + garbage
	Delay         time.Duration `yaml:"delay" json:"delay"`                   // how long a hung response hangs
	Instances     []string      `yaml:"instances" json:"instances"`           // empty = all
}

// DefaultJitter is the service-time spread of a scenario that sets none.
const DefaultJitter = 0.1

// JitterOrDefault is the scenario's effective jitter.
func (sc Scenario) JitterOrDefault() float64 {
	if sc.Jitter == nil {
		return DefaultJitter
	}
	return *sc.Jitter
}

// ModelOf is the model the group serves: its own, else the scenario's.
func (g Group) ModelOf(sc Scenario) string {
	if g.Model != "" {
		return g.Model
	}
	return sc.Model
}

// BytesPerRequest is the group's B_request: its own, else the scenario's.
func (g Group) BytesPerRequest(sc Scenario) int64 {
	if g.KVBytesPerRequest > 0 {
		return g.KVBytesPerRequest
	}
	return sc.KVBytesPerRequest
}

// CapacityPerEngine returns the saturated throughput (requests/s) of one
// engine of each stage, which is what the scenarios are dimensioned with.
func (g Group) CapacityPerEngine(sc Scenario) (prefill, kv, decode float64) {
	prefill = g.Prefill.TokensPerSec / float64(sc.InputTokens)
	kv = g.Transfer.BandwidthBytesPerSec / float64(g.BytesPerRequest(sc))
	decode = float64(g.Decode.MaxBatch) / (float64(sc.OutputTokens) * g.Decode.Step(g.Decode.MaxBatch).Seconds())
	return
}

// Step is the time of a decode step of n running requests.
func (d DecodeSpec) Step(n int) time.Duration {
	return d.StepTime + time.Duration(n)*d.StepTimePerRequest
}

func baseScenario() Scenario {
	vllm := Group{
		Name: "vllm", Engine: string(ptd.VLLM), Connector: ConnectorFlagCX, Rate: 4,
		Prefill:  PrefillSpec{Instances: 2, DP: 1, TokensPerSec: 24576, MaxBatch: 4, KVSlots: 60},
		Transfer: TransferSpec{BandwidthBytesPerSec: 8 * float64(1<<30), Threads: 4},
		Decode:   DecodeSpec{Instances: 2, DP: 1, StepTime: 25 * time.Millisecond, MaxBatch: 32, KVSlots: 60},
	}
	sgl := vllm
	sgl.Name, sgl.Engine, sgl.Connector, sgl.Rate = "sglang", string(ptd.SGLang), ConnectorMooncake, 2
	sgl.Prefill.Instances, sgl.Decode.Instances = 1, 1
	return Scenario{
		Model:             "meta-llama/Llama-3.1-8B-Instruct",
		InputTokens:       8192,
		OutputTokens:      256,
		KVBytesPerRequest: LlamaKVBytes,
		StopFraction:      0.3,
		Groups:            []Group{vllm, sgl},
	}
}

// Per prefill engine the default sizing gives 3 req/s prefill, 8 req/s KV and
// 5 req/s decode capacity; the scenarios move load and one capacity so that
// exactly one stage saturates.
var builtins = map[string]func() Scenario{
	"balanced": func() Scenario {
		sc := baseScenario()
		sc.Name, sc.Bottleneck = "balanced", "none"
		sc.Description = "2 req/s per prefill engine: every stage below 70% utilisation"
		return sc
	},
	"prefill-bound": func() Scenario {
		sc := scaleRates(baseScenario(), 1.75) // 3.5 req/s per P engine vs 3 capacity
		sc.Name, sc.Bottleneck = "prefill-bound", "prefill"
		sc.Description = "arrivals exceed prefill compute: prefill waiting grows"
		return sc
	},
	"kv-bound": func() Scenario {
		sc := scaleRates(baseScenario(), 1.25) // 2.5 req/s per P engine
		for i := range sc.Groups {
			sc.Groups[i].Transfer.BandwidthBytesPerSec = 2 * float64(1<<30) // 2 req/s of 1 GiB
		}
		sc.Name, sc.Bottleneck = "kv-bound", "kv"
		sc.Description = "KV link slower than prefill: inflight/transfer queues grow"
		return sc
	},
	"decode-bound": func() Scenario {
		sc := scaleRates(baseScenario(), 1.25) // 2.5 req/s per engine
		for i := range sc.Groups {
			sc.Groups[i].Decode.MaxBatch = 16
			sc.Groups[i].Decode.StepTime = 30 * time.Millisecond // 16/(256×0.03) ≈ 2.08 req/s
		}
		sc.Name, sc.Bottleneck = "decode-bound", "decode"
		sc.Description = "decode batch too small: decode waiting and prealloc grow"
		return sc
	},
	"restart": func() Scenario {
		sc := baseScenario()
		sc.Name, sc.Bottleneck = "restart", "none"
		sc.Description = "balanced load; vllm-p0 restarts at 20s (down 3s), sglang-d0 at 40s (down 2s)"
		sc.Restarts = []Restart{
			{Instance: "vllm-p0", At: 20 * time.Second, Down: 3 * time.Second},
			{Instance: "sglang-d0", At: 40 * time.Second, Down: 2 * time.Second},
		}
		return sc
	},
	"trtllm": func() Scenario {
		sc := baseScenario()
		trt := sc.Groups[0]
		trt.Name, trt.Engine, trt.Connector, trt.Rate = "trt", string(ptd.TensorRTLLM), ConnectorUCX, 3
		trt.Prefill.Instances, trt.Prefill.DP = 1, 2 // one ctx worker, attention DP 2
		trt.Decode.Instances = 1
		sc.Groups = []Group{sc.Groups[0], trt}
		sc.Name, sc.Bottleneck = "trtllm", "none"
		sc.Description = "balanced vLLM group plus a TensorRT-LLM group (1 ctx worker with attention DP 2, 1 gen worker, 3 req/s)"
		return sc
	},
	"flaky": func() Scenario {
		sc := baseScenario()
		sc.Name, sc.Bottleneck = "flaky", "none"
		sc.Description = "balanced load; 5% of scrapes hang for 3s, 5% return a malformed body"
		sc.Faults = Faults{TimeoutProb: 0.05, MalformedProb: 0.05, Delay: 3 * time.Second}
		return sc
	},
}

func scaleRates(sc Scenario, f float64) Scenario {
	for i := range sc.Groups {
		sc.Groups[i].Rate *= f
	}
	return sc
}

// ScenarioNames lists the built-in scenarios.
func ScenarioNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadScenario returns a built-in scenario by name.
func LoadScenario(name string) (Scenario, error) {
	f, ok := builtins[name]
	if !ok {
		return Scenario{}, fmt.Errorf("unknown scenario %q (have %s)", name, strings.Join(ScenarioNames(), ", "))
	}
	return f(), nil
}

// SetTotalRate rescales every group's arrival rate so they sum to total,
// keeping their proportions.
func (sc *Scenario) SetTotalRate(total float64) {
	var sum float64
	for _, g := range sc.Groups {
		sum += g.Rate
	}
	for i := range sc.Groups {
		if sum > 0 {
			sc.Groups[i].Rate = total * sc.Groups[i].Rate / sum
		} else {
			sc.Groups[i].Rate = total / float64(len(sc.Groups))
		}
	}
}

// TotalRate is the summed arrival rate of all groups.
func (sc Scenario) TotalRate() float64 {
	var sum float64
	for _, g := range sc.Groups {
		sum += g.Rate
	}
	return sum
}

// fieldError names the offending field so file loaders can map it to a line.
type fieldError struct {
	path string // e.g. groups[1].prefill.kv_slots
	msg  string
}

func (e *fieldError) Error() string { return e.path + ": " + e.msg }

// Validate checks that the scenario can be simulated.
func (sc Scenario) Validate() error {
	bad := func(path, format string, a ...any) error {
		return &fieldError{path: path, msg: fmt.Sprintf(format, a...)}
	}
	if sc.InputTokens <= 0 {
		return bad("input_tokens", "must be > 0")
	}
	if sc.OutputTokens <= 0 {
		return bad("output_tokens", "must be > 0")
	}
	if sc.KVBytesPerRequest <= 0 {
		return bad("kv_bytes_per_request", "must be > 0")
	}
	if sc.StopFraction < 0 || sc.StopFraction > 1 {
		return bad("stop_fraction", "must be within [0, 1]")
	}
	switch sc.Bottleneck {
	case "", "none", "prefill", "kv", "decode":
	default:
		return bad("bottleneck", "must be none, prefill, kv or decode")
	}
	if sc.Jitter != nil && (*sc.Jitter < 0 || *sc.Jitter >= 1) {
		return bad("jitter", "must be within [0, 1)")
	}
	if len(sc.Groups) == 0 {
		return bad("groups", "at least one group is required")
	}
	names := map[string]bool{}
	for i, g := range sc.Groups {
		p := fmt.Sprintf("groups[%d]", i)
		if g.Name == "" || strings.ContainsAny(g.Name, " \t\"/") {
			return bad(p+".name", "must be a non-empty name without spaces, quotes or slashes")
		}
		if names[g.Name] {
			return bad(p+".name", "duplicate group name %q", g.Name)
		}
		names[g.Name] = true
		prof := profileFor(g.Engine)
		switch {
		case prof == nil:
			return bad(p+".engine", "must be %s, got %q", orList(profileEngines()), g.Engine)
		case prof.ConnectorRequired && !slices.Contains(prof.Connectors, g.Connector):
			return bad(p+".connector", "%s needs %s, got %q", g.Engine, orList(prof.Connectors), g.Connector)
		case g.Connector != "" && !slices.Contains(prof.Connectors, g.Connector):
			return bad(p+".connector", "%s uses %s, got %q", g.Engine, orList(prof.Connectors), g.Connector)
		case prof.IterationStats && (g.TRTLLM.IterStatsInterval < 0 || g.TRTLLM.IterStatsMax < 0):
			return bad(p+".trtllm.iter_stats_interval", "iter_stats_interval and iter_stats_max must be >= 0")
		}
		if g.Rate < 0 {
			return bad(p+".rate", "must be >= 0")
		}
		if err := g.Failures.validate(prof, g.Engine, g.Connector); err != nil {
			return bad(p+".failures", "%v", err)
		}
		if b := g.Burst; b.Period < 0 || b.Period > 0 && (b.Duty <= 0 || b.Duty > 1) {
			return bad(p+".burst", "period must be >= 0 and, when set, duty within (0, 1]")
		}
		if err := g.PrefixHit.validate(); err != nil {
			return bad(p+".prefix_hit", "%v", err)
		}
		if g.Prefill.Instances <= 0 || g.Decode.Instances <= 0 {
			return bad(p+".prefill.instances", "prefill and decode need at least one instance each")
		}
		if g.Prefill.DP < 0 || g.Decode.DP < 0 {
			return bad(p+".prefill.dp", "must be >= 0")
		}
		if g.Prefill.TokensPerSec <= 0 {
			return bad(p+".prefill.tokens_per_sec", "must be > 0")
		}
		if g.Prefill.MaxBatch <= 0 {
			return bad(p+".prefill.max_batch", "must be > 0")
		}
		if g.Prefill.KVSlots < g.Prefill.MaxBatch {
			return bad(p+".prefill.kv_slots", "must be >= prefill.max_batch")
		}
		if g.Transfer.BandwidthBytesPerSec <= 0 {
			return bad(p+".transfer.bandwidth_bytes_per_sec", "must be > 0")
		}
		if g.Transfer.Threads <= 0 {
			return bad(p+".transfer.threads", "must be > 0")
		}
		if g.Transfer.Descriptors < 0 {
			return bad(p+".transfer.descriptors", "must be >= 0")
		}
		if g.Decode.StepTime <= 0 {
			return bad(p+".decode.step_time", "must be > 0")
		}
		if g.Decode.StepTimePerRequest < 0 {
			return bad(p+".decode.step_time_per_request", "must be >= 0")
		}
		if g.Decode.MaxBatch <= 0 {
			return bad(p+".decode.max_batch", "must be > 0")
		}
		if g.Decode.KVSlots < g.Decode.MaxBatch {
			return bad(p+".decode.kv_slots", "must be >= decode.max_batch")
		}
		if err := g.validateRouting(p, bad); err != nil {
			return err
		}
		if err := g.validateRouterDelay(p, bad); err != nil {
			return err
		}
		if err := g.validateShed(p, bad); err != nil {
			return err
		}
		if g.NIXLPush && g.Connector != ConnectorNIXL {
			return bad(p+".nixl_push", "needs the nixl connector, got %q", g.Connector)
		}
	}
	inst := map[string]bool{}
	for _, n := range sc.InstanceNames() {
		inst[n] = true
	}
	for i, r := range sc.Restarts {
		p := fmt.Sprintf("restarts[%d]", i)
		if !inst[r.Instance] {
			return bad(p+".instance", "unknown instance %q", r.Instance)
		}
		if r.At < 0 || r.Down <= 0 {
			return bad(p+".at", "at must be >= 0 and down > 0")
		}
		for j, o := range sc.Restarts[:i] {
			if o.Instance == r.Instance && r.At < o.At+o.Down && o.At < r.At+r.Down {
				return bad(p+".at", "overlaps restarts[%d] of the same instance", j)
			}
		}
	}
	if err := sc.validAsleep(inst, bad); err != nil {
		return err
	}
	f := sc.Faults
	if f.TimeoutProb < 0 || f.MalformedProb < 0 || f.TimeoutProb+f.MalformedProb > 1 {
		return bad("faults.timeout_prob", "probabilities must be >= 0 and sum to <= 1")
	}
	for i, n := range f.Instances {
		if !inst[n] {
			return bad(fmt.Sprintf("faults.instances[%d]", i), "unknown instance %q", n)
		}
	}
	return nil
}

// InstanceNames returns the instance names in creation order:
// <group>-p<i> then <group>-d<i> for each group.
func (sc Scenario) InstanceNames() []string {
	var out []string
	for _, g := range sc.Groups {
		for i := 0; i < g.Prefill.Instances; i++ {
			out = append(out, fmt.Sprintf("%s-p%d", g.Name, i))
		}
		for i := 0; i < g.Decode.Instances; i++ {
			out = append(out, fmt.Sprintf("%s-d%d", g.Name, i))
		}
	}
	return out
}
