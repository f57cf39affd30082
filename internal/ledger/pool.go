package ledger

import (
	"fmt"

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
// instances are a pool "MODEL (ENGINE)". An instance whose pool is not known
// is grouped by its engine kind ("unknown" when that is not known either).
func PoolOf(meta map[string]TargetMeta) func(ip *InstancePoint) string {
	engines := map[string]map[string]bool{}
	for _, m := range meta {
		if m.Pool == "" || m.PoolLabelled {
			continue
		}
		if engines[m.Pool] == nil {
			engines[m.Pool] = map[string]bool{}
		}
		engines[m.Pool][m.Engine] = true
	}
	return func(ip *InstancePoint) string {
		m := meta[ip.Target]
		switch {
		case m.Pool != "" && len(engines[m.Pool]) > 1:
			return m.Pool + " (" + m.Engine + ")"
		case m.Pool != "":
			return m.Pool
		case ip.Engine == "":
			return "unknown"
		}
		return ip.Engine
	}
}

// PoolRequest is a pool's B_request and, when it has none, why. A pool's
// own (Config.PoolRequests) comes first; the deployment's B_request (the
// one-pool flags) serves a pool only where it cannot be another model's
// number: when at most one named pool is in view, or the pool is named
// by no label or model (an engine-kind group). named says whether pool
// came from PoolName; namedPools is how many named pools are in view.
func PoolRequest(pool string, named bool, namedPools int, own map[string]kvsize.Request, deployment kvsize.Request) (kvsize.Request, string) {
	if r, ok := own[pool]; ok && r.Bytes > 0 {
		return r, ""
	}
	unset := kvsize.Request{Basis: kvsize.BasisUnset}
	switch {
	case deployment.Bytes <= 0 && len(own) > 0:
		return unset, fmt.Sprintf("pool %q has no B_request: set pools: %s: kv_bytes_per_request or model", pool, pool)
	case deployment.Bytes <= 0:
		return unset, "B_request is not set"
	case named && namedPools > 1:
		return unset, fmt.Sprintf("%d pools serve different models, so the one -kv-bytes-per-request cannot hold for pool %q: set pools: %s: kv_bytes_per_request or model", namedPools, pool, pool)
	}
	return deployment, ""
}
