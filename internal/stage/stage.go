// Package stage names the three stages every request of a P/D deployment
// passes, in pipeline order: prefill computes the prompt's KV cache, kv
// ships it to a decode instance, decode generates the output
// (docs/design.md#the-three-curves). The names are the values of the
// exported metrics' stage label and of the JSON API.
package stage

// Stage is one stage of the pipeline.
type Stage string

// The stages, upstream to downstream.
const (
	Prefill Stage = "prefill"
	KV      Stage = "kv"
	Decode  Stage = "decode"
)

// All lists the stages in pipeline order.
var All = [3]Stage{Prefill, KV, Decode}
