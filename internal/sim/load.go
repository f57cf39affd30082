package sim

import (
	"fmt"

	"github.com/ptdmon/ptdmon/internal/stage"
)

// Stage names of the load model, as the verdict names them: the pipeline's
// stages (package stage) and these.
const (
	StageNone      = "none"
	StageAdmission = "admission" // decode KV slots: pre-allocated before prefill (SGLang) or held from the copy on (the KV-admission limit)
)

// Saturated is the utilisation at which a stage is the bottleneck: offered
// load at or above capacity, so its upstream queue grows without bound.
const Saturated = 1.0

// Gating says when a group's KV moves.
const (
	// GatingDecodeSlot: prefill runs first, its KV waits on P until a decode
	// engine has allocated a KV slot for the request, then moves (vLLM with
	// FlagCX or NIXL, TensorRT-LLM). The decode side decides when KV moves,
	// so a full decode makes KV trail prefill.
	GatingDecodeSlot = "decode-slot"
	// GatingPrealloc: decode reserves the KV slot before prefill may start
	// (SGLang's bootstrap handshake); the prefill side pushes as soon as it
	// is done.
	GatingPrealloc = "prealloc-first"
)

// StageLoad is one stage of one group under the model's load.
type StageLoad struct {
	Stage string `json:"stage"`
	// OfferedPerSec is the load offered to the stage: the group's arrival
	// rate, since every request passes every stage, but for decode-only
	// requests, which pass decode alone.
	OfferedPerSec  float64 `json:"offered_per_sec"`
	CapacityPerSec float64 `json:"capacity_per_sec"`
	// Utilisation is offered ÷ capacity; ≥ 1 means saturated.
	Utilisation float64 `json:"utilisation"`
	// Limit says which resource sets the capacity.
	Limit string `json:"limit"`
}

// GroupLoad is the load model of one group.
type GroupLoad struct {
	Group      string      `json:"group"`
	Engine     string      `json:"engine"`
	Connector  string      `json:"connector"`
	Gating     string      `json:"gating"`
	Rate       float64     `json:"rate"`
	Stages     []StageLoad `json:"stages"`
	Bottleneck string      `json:"bottleneck"`
	// Utilisation is the bottleneck's (or, when none, the busiest stage's).
	Utilisation float64 `json:"utilisation"`
}

// Stage returns the named stage's load (zero value if the group has none).
func (g GroupLoad) Stage(name string) StageLoad {
	for _, s := range g.Stages {
		if s.Stage == name {
			return s
		}
	}
	return StageLoad{}
}

// Load is the model's answer to "which stage limits": per group and for the
// deployment. It follows from the scenario's rates and capacities alone, not
// from its name or label.
type Load struct {
	Groups []GroupLoad `json:"groups"`
	// Bottleneck of the deployment: the groups' common bottleneck, "none"
	// when no group saturates, or "mixed" when saturated groups disagree.
	Bottleneck string `json:"bottleneck"`
}

// Mixed is the deployment bottleneck when groups are limited by different
// stages.
const Mixed = "mixed"

// LoadModel computes every group's stage utilisations and bottleneck.
//
// Capacities per group (requests/s), with nP prefill and nD decode engines:
//
//	prefill    nP × tokens_per_sec ÷ S
//	kv         min(nP × bandwidth ÷ B,  nP × prefill.kv_slots ÷ hold_P)
//	decode     nD × max_batch ÷ (O × step)
//	admission  nD × decode.kv_slots ÷ hold_D      (prealloc-first; decode-slot gating where below decode's)
//
// B is the mean bytes of one transfer: B_request, less with prefix hits
// (B_request × (1 − fraction × cached), prefix.go).
//
// hold_P = S ÷ tokens_per_sec + t_x is the least time a prefill KV slot is
// held (compute, then the copy), t_x = B ÷ (bandwidth ÷ threads) one
// copy on one thread. hold_D is the least time a decode KV slot is held:
// t_x + O × step + step with decode-slot gating (the slot is taken before
// the KV moves), plus S ÷ tokens_per_sec with prealloc-first (the slot is
// taken before prefill starts). Holding times only grow with queueing, so
// the slot capacities are upper bounds and their utilisations lower bounds.
func (sc Scenario) LoadModel() Load {
	var out Load
	for _, g := range sc.Groups {
		out.Groups = append(out.Groups, g.load(sc))
	}
	out.Bottleneck = StageNone
	for _, g := range out.Groups {
		switch {
		case g.Bottleneck == StageNone:
		case out.Bottleneck == StageNone:
			out.Bottleneck = g.Bottleneck
		case out.Bottleneck != g.Bottleneck:
			out.Bottleneck = Mixed
		}
	}
	return out
}

// gating follows from the engine's profile (decode-slot for an engine
// without one: the scenario is invalid anyway).
func (g Group) gating() string {
	if p := profileFor(g.Engine); p != nil && p.PreallocFirst {
		return GatingPrealloc
	}
	return GatingDecodeSlot
}

func (g Group) load(sc Scenario) GroupLoad {
	conn := profileFor(g.Engine).connector(g.Connector)
	gl := GroupLoad{Group: g.Name, Engine: g.Engine, Connector: conn, Gating: g.gating(), Rate: g.Rate}
	nP := float64(g.Prefill.Instances * max(g.Prefill.DP, 1))
	nD := float64(g.Decode.Instances * max(g.Decode.DP, 1))
	// B is the mean transfer: prefix hits move less than B_request.
	S, O, B := float64(sc.InputTokens), float64(sc.OutputTokens), g.MeanTransferBytes(sc)
	step := g.Decode.Step(g.Decode.MaxBatch).Seconds() // at full batch
	tPrefill := S / g.Prefill.TokensPerSec
	tCopy := B / (g.Transfer.BandwidthBytesPerSec / float64(g.Transfer.Threads))
	tDecode := O*step + step

	// Decode-only requests (router.go) pass decode alone: prefill and KV
	// are offered the remote prefills, and a decode KV slot is held for
	// the copy only by those.
	f := g.DecodeOnlyFraction
	offered := g.Rate
	add := func(stage string, capacity float64, limit string) {
		u := 0.0
		if capacity > 0 {
			u = offered / capacity
		}
		gl.Stages = append(gl.Stages, StageLoad{Stage: stage, OfferedPerSec: offered, CapacityPerSec: capacity, Utilisation: u, Limit: limit})
	}
	offered = g.Rate * (1 - f)
	add(string(stage.Prefill), nP*g.Prefill.TokensPerSec/S, fmt.Sprintf("%g prefill engines × %g tokens/s ÷ %d tokens", nP, g.Prefill.TokensPerSec, sc.InputTokens))

	link := nP * g.Transfer.BandwidthBytesPerSec / B
	pSlots := nP * float64(g.Prefill.KVSlots) / (tPrefill + tCopy)
	if link <= pSlots {
		add(string(stage.KV), link, fmt.Sprintf("%g links × %.3g GB/s ÷ B_request", nP, g.Transfer.BandwidthBytesPerSec/1e9))
	} else {
		add(string(stage.KV), pSlots, fmt.Sprintf("%g × %d prefill KV slots held ≥ %.2f s each", nP, g.Prefill.KVSlots, tPrefill+tCopy))
	}

	offered = g.Rate
	batch := nD * float64(g.Decode.MaxBatch) / (O * step)
	batchLimit := fmt.Sprintf("%g decode engines × batch %d ÷ (%d tokens × %v)", nD, g.Decode.MaxBatch, sc.OutputTokens, g.Decode.Step(g.Decode.MaxBatch))
	if g.gating() == GatingPrealloc {
		hold := (1-f)*(tPrefill+tCopy) + tDecode
		add(StageAdmission, nD*float64(g.Decode.KVSlots)/hold,
			fmt.Sprintf("%g × %d decode KV slots reserved ≥ %.2f s each (prefill, copy, decode)", nD, g.Decode.KVSlots, hold))
		add(string(stage.Decode), batch, batchLimit)
	} else {
		// A request takes its decode KV slot before its KV moves and
		// holds it through the copy and its decode: where the slots run
		// out before the batch does, decode admits no more requests than
		// slots free up, the KV-admission limit, neither the link nor
		// decode compute.
		hold := (1-f)*tCopy + tDecode
		slots := nD * float64(g.Decode.KVSlots) / hold
		if slots < batch {
			add(StageAdmission, slots, fmt.Sprintf("%g × %d decode KV slots held ≥ %.2f s each (copy, decode)", nD, g.Decode.KVSlots, hold))
		}
		add(string(stage.Decode), batch, batchLimit)
	}

	gl.Bottleneck = StageNone
	for _, s := range gl.Stages {
		if s.Utilisation > gl.Utilisation {
			gl.Utilisation = s.Utilisation
			if s.Utilisation >= Saturated {
				gl.Bottleneck = s.Stage
			}
		}
	}
	return gl
}
