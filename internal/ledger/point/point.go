package point

import "time"

// Point is the state of the deployment at one tick.
type Point struct {
	Time    time.Time  `json:"time"`
	Prefill StagePoint `json:"prefill"`
	KV      KVPoint    `json:"kv"`
	Decode  StagePoint `json:"decode"`
	// GlobalKVBytes is flagcx_total_bytes_transferred_total: every engine's
	// cumulative KV bytes, carried across resets and vanished engines.
	GlobalKVBytes Num `json:"global_kv_bytes_total"`
	// Router is every router's sum; Routers the Router of each pool that
	// has routers, by pool name, as the JSON API writes them.
	Router    RouterPoint     `json:"router"`
	Routers   []RouterPoint   `json:"routers,omitempty"`
	Instances []InstancePoint `json:"instances,omitempty"`
	// Pools is each pool at the tick, in name order (poolsum.go); the API
	// serves them as its pool objects.
	Pools []PoolPoint `json:"-"`
}

// StagePoint is the prefill or decode stage: the sum over its instances.
type StagePoint struct {
	Instant Num `json:"requests_per_second"`
	Window  Num `json:"requests_per_second_window"`

	Instances int      `json:"instances"`
	Up        int      `json:"instances_up"`
	Partial   bool     `json:"partial,omitempty"`
	Missing   []string `json:"missing,omitempty"`
	// Asleep are the stage's instances in sleep mode (InstancePoint.Sleep):
	// up but serving nothing on purpose, they are in neither Instances nor
	// Up, and none of the stage's sums.
	Asleep []string `json:"asleep,omitempty"`

	Running Num `json:"running"`
	Waiting Num `json:"waiting"`
	// WaitingBy splits Waiting by why requests wait, where the engines say
	// (vLLM's num_requests_waiting_by_reason): the verdict's input, not in
	// the JSON, whose stream event stays within its budget; /metrics has it
	// per instance (ptd_queue_requests{queue="waiting_capacity"|…}).
	WaitingBy WaitingReasons `json:"-"`
	Queues    Queues         `json:"queues"`
	KVUsage   Num            `json:"kv_cache_usage_ratio"`
	PromptTPS Num            `json:"prompt_tokens_per_second"`
	GenTPS    Num            `json:"generation_tokens_per_second"`
	TTFT      Quant          `json:"ttft_seconds"`
	ITL       Quant          `json:"itl_seconds"`
	E2E       Quant          `json:"e2e_seconds"`

	// Busy is the stage's busy instances over the window: each instance's
	// busy fraction, added up, where every instance up has one; BusyBasis
	// is the weakest of their bases (docs/advisor.md#busy-time).
	Busy      Num    `json:"busy_instances"`
	BusyBasis string `json:"busy_basis,omitempty"`
	// Batch is the decode stage's batch against its limit; nil for
	// prefill.
	Batch *Batch `json:"batch,omitempty"`
}

// Batch is the decode batch over the window (the running gauges' mean,
// added up over the instances) and the largest batch the instances can
// run, added up, with its basis (docs/advisor.md#decode-batch).
type Batch struct {
	Running    Num    `json:"running_mean"`
	Limit      Num    `json:"limit"`
	LimitBasis string `json:"limit_basis,omitempty"`
	// Step is the mean time between a request's tokens over the window
	// (the inter-token latency's mean, a decode step's time), over the
	// instances: how a step grows with the batch tells how the
	// instances' rate grows to their limit (docs/advisor.md#decode-batch).
	// The advice's evidence states it; the point's JSON has the
	// inter-token latency's quantiles already.
	Step Num `json:"-"`
}

// MarshalJSON adds the reasons of absent values.
func (b Batch) MarshalJSON() ([]byte, error) {
	type alias Batch
	return withAbsent(b, alias(b))
}

// KVPoint is the KV-transfer stage: bytes from every instance's connector,
// converted to requests with B_request.
type KVPoint struct {
	Instant      Num `json:"requests_per_second"`
	Window       Num `json:"requests_per_second_window"`
	BytesInstant Num `json:"bytes_per_second"`
	BytesWindow  Num `json:"bytes_per_second_window"`
	Transfers    Num `json:"transfers_per_second"`
	Failures     Num `json:"failures_per_second"`

	Instances int      `json:"instances"`
	Up        int      `json:"instances_up"`
	Partial   bool     `json:"partial,omitempty"`
	Missing   []string `json:"missing,omitempty"`

	XferTime Quant `json:"transfer_seconds"`
	// LinkBusy is transfer-seconds per second over the window, from the
	// connectors that export a transfer time histogram, and LinkBytes the
	// bytes/s those connectors moved: their ratio is one transfer's speed
	// (docs/advisor.md#kv-link), which the advice shows.
	LinkBusy  Num `json:"link_busy_transfers"`
	LinkBytes Num `json:"-"`
	// Links are the instances those come from.
	Links int `json:"-"`
}

// WaitingReasons are a stage's waiting requests by reason: Capacity, those
// waiting for KV blocks or a place in the batch; Deferred, those held back
// by a transient constraint, on decode their remote KV not yet arrived
// (vLLM's WAITING_FOR_REMOTE_KVS).
type WaitingReasons struct {
	Capacity Num `json:"capacity"`
	Deferred Num `json:"deferred"`
}

// Queues are the P/D hand-off queues (SGLang): bootstrap and inflight on
// prefill instances, prealloc and transfer on decode instances.
type Queues struct {
	Bootstrap Num `json:"bootstrap"`
	Inflight  Num `json:"inflight"`
	Prealloc  Num `json:"prealloc"`
	Transfer  Num `json:"transfer"`
}

// Quant holds quantiles of a histogram over the window.
type Quant struct {
	P50 Num `json:"p50"`
	P90 Num `json:"p90"`
	P99 Num `json:"p99"`
}

// Sleep states of an instance (InstancePoint.Sleep), vLLM's
// engine_sleep_state label values; SleepPaused is an instance whose
// engines are not awake at either level.
const (
	SleepWeightsOffloaded = "weights_offloaded"
	SleepDiscardAll       = "discard_all"
	SleepPaused           = "asleep"
)

// WhyNotKeptDetail is the reason of an instance's value the history's
// older detail does not keep.
const WhyNotKeptDetail = "not kept in the history's older per-instance detail"

// InstancePoint is one target at one tick.
type InstancePoint struct {
	Target string `json:"target"`
	Role   string `json:"role"`
	Engine string `json:"engine"`
	// Pool is the pool the instance serves in (PoolOf), settled once per
	// tick for every reader of the point.
	Pool string `json:"-"`
	Up   bool   `json:"up"`
	// Sleep is the sleep state of an instance none of whose engines is
	// awake (vLLM's sleep mode: SleepWeightsOffloaded, SleepDiscardAll or
	// SleepPaused), "" for one that serves or does not say. An instance
	// asleep is up and not serving, on purpose: its stage counts it apart
	// (StagePoint.Asleep), never as down or stalled.
	Sleep string `json:"sleep,omitempty"`

	Instant  Num `json:"requests_per_second"`
	Window   Num `json:"requests_per_second_window"`
	KVBytes  Num `json:"kv_bytes_per_second"`
	KVBytesW Num `json:"kv_bytes_per_second_window"`
	Running  Num `json:"running"`
	Waiting  Num `json:"waiting"`
	// WaitingDeferred is the part of Waiting deferred by a transient
	// constraint where the engine splits its waiting by reason (vLLM's
	// num_requests_waiting_by_reason; on decode, requests whose KV has not
	// arrived): not ready for the engine, the advisor's saturation rule
	// leaves them out. Neither the JSON nor the history's older detail
	// carries it: read back, it is absent with WhyNotKeptDetail.
	WaitingDeferred Num    `json:"-"`
	Queues          Queues `json:"queues"`
	KVUsage         Num    `json:"kv_cache_usage_ratio"`
	PromptTPS       Num    `json:"prompt_tokens_per_second"`
	GenTPS          Num    `json:"generation_tokens_per_second"`

	// WindowFrom and WindowTo are the real times of the first and last
	// samples the windowed rate was computed from.
	WindowFrom time.Time `json:"window_from,omitzero"`
	WindowTo   time.Time `json:"window_to,omitzero"`
}

// MarshalJSON adds the reasons of absent values.
func (s StagePoint) MarshalJSON() ([]byte, error) {
	type alias StagePoint
	return withAbsent(s, alias(s))
}

// MarshalJSON adds the reasons of absent values.
func (k KVPoint) MarshalJSON() ([]byte, error) {
	type alias KVPoint
	return withAbsent(k, alias(k))
}

// MarshalJSON adds the reasons of absent values.
func (p InstancePoint) MarshalJSON() ([]byte, error) {
	type alias InstancePoint
	return withAbsent(p, alias(p))
}

// MarshalJSON adds the reason when the global counter is absent.
func (p Point) MarshalJSON() ([]byte, error) {
	type alias Point
	return withAbsent(struct {
		GlobalKVBytes Num `json:"global_kv_bytes_total"`
	}{p.GlobalKVBytes}, alias(p))
}
