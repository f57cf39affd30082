package ledger

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// Pool labels: a target's label that names its pool, read in this order
// (docs/pools.md). ptd_pool is what the configuration's `pool:` and the
// generated scrape configuration write; pool is accepted from file_sd.
const (
	LabelPool      = "ptd_pool"
	LabelPoolShort = "pool"
)

// PoolName is the pool of a target: its pool label, else the model its
// exposition names; "" when neither is known. labelled says the name came
// from a label.
func PoolName(labels map[string]string, exposedModel string) (name string, labelled bool) {
	for _, k := range []string{LabelPool, LabelPoolShort} {
		if v := labels[k]; v != "" {
			return v, true
		}
	}
	return exposedModel, false
}

// PoolOf returns the grouping of instances into pools by the targets'
// metadata. A pool named by its model alone never mixes engine kinds (a
// prefill instance hands its KV only to a decode instance of its own
// engine): where one model is served by several engines, each engine's
// instances are a pool "MODEL (ENGINE)". A router is none of the model's
// engines: it joins the pool of its model. An instance whose pool is not
// known is grouped by its engine kind ("unknown" when that is not known
// either).
func PoolOf(meta map[string]TargetMeta) func(ip *InstancePoint) string {
	engines := map[string]map[string]bool{}
	for _, m := range meta {
		if m.Pool == "" || m.PoolLabelled || m.Router {
			continue
		}
		if engines[m.Pool] == nil {
			engines[m.Pool] = map[string]bool{}
		}
		engines[m.Pool][m.Engine] = true
	}
	// Each target's pool, settled once: the verdict asks for every
	// instance of every point of its window.
	pools := make(map[string]string, len(meta))
	for target, m := range meta {
		switch {
		case m.Pool != "" && len(engines[m.Pool]) > 1 && !m.Router:
			pools[target] = m.Pool + " (" + m.Engine + ")"
		case m.Pool != "":
			pools[target] = m.Pool
		}
	}
	// A router that names no model (vLLM's router) serves the one pool
	// there is; in front of several it needs its pool label.
	served := map[string]bool{}
	for target, m := range meta {
		switch {
		case m.Router:
		case pools[target] != "":
			served[pools[target]] = true
		case m.Engine != "":
			served[m.Engine] = true
		default:
			served["unknown"] = true
		}
	}
	for target, m := range meta {
		if m.Router && pools[target] == "" && len(served) == 1 {
			for p := range served {
				pools[target] = p
			}
		}
	}
	return func(ip *InstancePoint) string {
		switch p := pools[ip.Target]; {
		case p != "":
			return p
		case ip.Engine == "":
			return "unknown"
		}
		return ip.Engine
	}
}

// PoolRequest is a pool's B_request and, when it has none, why. A pool's
// own (Config.PoolRequests) comes first. Once pools have their own, a pool
// without one has none: the deployment's B_request (the one-pool flags) is
// some model's number, and not to be given to another. Without any pool's
// own, the deployment's serves every pool, as it did before pools.
func PoolRequest(pool string, own map[string]kvsize.Request, deployment kvsize.Request) (kvsize.Request, string) {
	if r, ok := own[pool]; ok && r.Bytes > 0 {
		return r, ""
	}
	// One model on several engines is a pool "MODEL (ENGINE)" per engine;
	// the model's B_request is theirs.
	if i := strings.LastIndex(pool, " ("); i > 0 && strings.HasSuffix(pool, ")") {
		if r, ok := own[pool[:i]]; ok && r.Bytes > 0 {
			return r, ""
		}
	}
	unset := kvsize.Request{Basis: kvsize.BasisUnset}
	switch {
	case len(own) > 0:
		return unset, fmt.Sprintf("pool %q has no B_request of its own: set pools: %s: kv_bytes_per_request or model", pool, pool)
	case deployment.Bytes <= 0:
		return unset, "B_request is not set (-kv-bytes-per-request, or -model-config with -seq-len)"
	}
	return deployment, ""
}

// addPerRequest adds bytes ÷ perRequest to sum; an absent term makes the
// sum absent with its reason.
func addPerRequest(sum, bytes Num, perRequest int64) Num {
	switch {
	case !sum.OK():
		return sum
	case !bytes.OK():
		return bytes
	}
	return Val(sum.V + bytes.V/float64(perRequest))
}
