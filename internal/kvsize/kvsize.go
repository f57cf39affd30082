// Package kvsize computes B_request, the bytes of one request's KV cache, from a
// model's Hugging Face config.json. ptdmon divides KV-transfer bytes/s by this
// number to get KV requests/s, so a wrong B_request silently scales a whole curve:
// every choice made here is reported back (Result.Rules, Result.Defaults) so the
// user can check it against the engine they run.
//
// The package is pure: no I/O except FromFile reading the one file it is given.
package kvsize

import (
	"errors"
	"fmt"
	"os"
)

// Options for one test run.
type Options struct {
	SeqLen      int    // S, tokens per request (>0)
	KVDtype     string // "auto"|"bf16"|"fp16"|"fp8"|"fp8_e4m3"|"fp8_e5m2" ("" = auto: from torch_dtype/dtype)
	TP          int    // tensor-parallel size (0 or 1 = none)
	DPAttention bool
	WindowMode  string // "window" (default) | "full"

	// MTP counts the num_nextn_predict_layers draft layers; they hold KV only
	// when MTP speculative decoding is on, so they are excluded by default.
	MTP bool
	// SSMDtype is the recurrent-state dtype of linear-attention (Gated-DeltaNet)
	// layers: "" or "auto" = the model dtype, "bf16", "fp16", "fp32". Engines
	// expose it as a separate knob from the KV dtype, often float32.
	SSMDtype string
}

// Window modes. Engines differ in whether sliding-window layers move only their
// window or every token, so the deployment has to say which one applies.
const (
	WindowModeWindow = "window"
	WindowModeFull   = "full"
)

// Layer types, spelled as in transformers' layer_types.
const (
	LayerFull    = "full_attention"
	LayerSliding = "sliding_attention"
	LayerChunked = "chunked_attention"
	LayerLinear  = "linear_attention"
)

// Result is B_request with everything needed to audit it.
type Result struct {
	Inputs Inputs `json:"inputs"`
	// ElementBytes is the size of one KV element (2 for bf16/fp16, 1 for fp8).
	ElementBytes int `json:"element_bytes"`
	// PerTokenBytes is the KV bytes of one prompt token summed over every
	// KV-holding layer, as stored (K and V, or the single MLA latent).
	PerTokenBytes int64 `json:"per_token_bytes"`
	// StateBytesPerRequest is the fixed per-request state of linear-attention
	// layers, independent of S.
	StateBytesPerRequest int64 `json:"state_bytes_per_request"`
	// BytesPerRequest is B_request: the logical, TP-agnostic size of one request.
	BytesPerRequest int64        `json:"bytes_per_request"`
	Layers          []Layer      `json:"layers"`
	Groups          []LayerGroup `json:"groups"`
	TP              TPInfo       `json:"tp"`
	// TPWireFactor = WireBytesPerRequest / BytesPerRequest: what a byte counter
	// summed over all ranks sees relative to the logical size (replicated KV
	// heads and MLA latents are counted once per rank).
	TPWireFactor           float64  `json:"tp_wire_factor"`
	WireBytesPerRequest    int64    `json:"wire_bytes_per_request"`
	PerRankBytesPerRequest int64    `json:"per_rank_bytes_per_request"`
	Rules                  []string `json:"rules"`
	Defaults               []string `json:"defaults"`
	Warnings               []string `json:"warnings"`
}

// Inputs echoes what the result was computed from.
type Inputs struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures,omitempty"`
	// ConfigSection is where the attention fields were read: "" (top level),
	// "text_config", "llm_config" or "language_config".
	ConfigSection string `json:"config_section"`
	SeqLen        int    `json:"seq_len"`
	KVDtype       string `json:"kv_dtype"`       // as requested
	ResolvedDtype string `json:"resolved_dtype"` // what the KV cache is stored in
	TP            int    `json:"tp"`
	DPAttention   bool   `json:"dp_attention"`
	WindowMode    string `json:"window_mode"`
	MTP           bool   `json:"mtp"`
	SSMDtype      string `json:"ssm_dtype,omitempty"`
}

// Layer is one layer's share of a request.
type Layer struct {
	Index int    `json:"index"`
	Type  string `json:"type"`
	// Window is the sliding window or attention chunk of the layer, 0 if none.
	Window int `json:"window,omitempty"`
	// TokensHeld is how many of the S tokens the layer keeps (0 for linear layers).
	TokensHeld    int   `json:"tokens_held"`
	BytesPerToken int64 `json:"bytes_per_token"`
	// StateBytes is the fixed recurrent state of a linear-attention layer.
	StateBytes int64 `json:"state_bytes,omitempty"`
	Bytes      int64 `json:"bytes"`
	MTP        bool  `json:"mtp,omitempty"`
}

// LayerGroup is a set of identical layers, in order of first appearance.
type LayerGroup struct {
	Count         int    `json:"count"`
	Type          string `json:"type"`
	Window        int    `json:"window,omitempty"`
	TokensHeld    int    `json:"tokens_held"`
	BytesPerToken int64  `json:"bytes_per_token"`
	StateBytes    int64  `json:"state_bytes,omitempty"`
	BytesPerLayer int64  `json:"bytes_per_layer"`
	Bytes         int64  `json:"bytes"`
	MTP           bool   `json:"mtp,omitempty"`
}

// TPInfo describes how tensor parallelism splits and replicates the cache.
type TPInfo struct {
	Size        int `json:"size"`
	AttentionTP int `json:"attention_tp"`
	// KVHeads and KVHeadsPerRank are 0 for MLA models (one latent, no heads).
	KVHeads        int64 `json:"kv_heads,omitempty"`
	KVHeadsPerRank int64 `json:"kv_heads_per_rank,omitempty"`
	// Replication is R of the attention layers: how many copies of each KV head
	// (or of the MLA latent) exist summed over attention ranks.
	Replication int64 `json:"replication"`
}

// ErrInvalid marks errors caused by the input (config or options) rather than
// by I/O, so callers can map them to a usage exit code.
var ErrInvalid = errors.New("kvsize: invalid input")

type invalidError struct{ err error }

func (e invalidError) Error() string        { return e.err.Error() }
func (e invalidError) Unwrap() error        { return e.err }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error {
	return invalidError{fmt.Errorf(format, args...)}
}

// FromConfigJSON computes B_request from the bytes of a config.json.
func FromConfigJSON(data []byte, opts Options) (Result, error) {
	return compute("config.json", data, opts)
}

// FromFile computes B_request from a config.json on disk; errors name the file.
func FromFile(path string, opts Options) (Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Result{}, fmt.Errorf("kvsize: %w", err)
	}
	return compute(path, data, opts)
}
