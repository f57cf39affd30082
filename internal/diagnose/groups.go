package diagnose

import (
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// GroupVerdict is the verdict of one group of instances that serve
// together: one pool (docs/pools.md), as the ledger groups them.
type GroupVerdict struct {
	Group    string   `json:"group"`
	Class    Class    `json:"stage"`
	Headline string   `json:"headline"`
	Evidence []string `json:"evidence,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	Traffic  []string `json:"traffic,omitempty"`
	// Prefill, Decode and KV count the instances whose numbers the verdict
	// rests on (KV: those exporting KV bytes).
	Prefill int  `json:"prefill_instances"`
	Decode  int  `json:"decode_instances"`
	KV      int  `json:"kv_instances"`
	HasKV   bool `json:"has_kv"`
	Samples int  `json:"samples"`
	// BytesPerTransfer is the mean bytes of one of the group's KV
	// transfers over the window, and BytesSkew whether it is further
	// from the group's B_request than the thresholds allow; 0 where its
	// connectors count no transfer or it has no B_request.
	BytesPerTransfer float64 `json:"-"`
	BytesSkew        bool    `json:"-"`
}

// byEngine is the group of an instance the ledger put in no pool: its
// engine kind.
func byEngine(ip *ledger.InstancePoint) string {
	if ip.Engine == "" {
		return "unknown"
	}
	return ip.Engine
}

// groupOf is the group of an instance: its pool.
func groupOf(ip *ledger.InstancePoint) string {
	if ip.Pool != "" {
		return ip.Pool
	}
	return byEngine(ip)
}
