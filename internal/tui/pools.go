package tui

import (
	"bytes"
	"fmt"
)

// pools writes one line per pool when more than one pool serves a known
// model: its verdict and its stages' windowed req/s (docs/pools.md), below
// the deployment's. Pools of unknown models are engine kinds, which the
// instance table's groups already show.
func pools(w *bytes.Buffer, snap *Snapshot, win string, width int) {
	models := 0
	for _, p := range snap.Pools {
		if p.Model != "" {
			models++
		}
	}
	if models < 2 {
		return
	}
	verdicts := map[string]string{}
	if v := snap.Verdict; v != nil {
		for _, g := range v.Groups {
			verdicts[g.Group] = g.Headline
		}
	}
	fmt.Fprintf(w, "\n%-24s %9s %9s %9s  %s\n", "pool", "prefill", "KV", "decode", "verdict ("+win+" window req/s)")
	for _, p := range snap.Pools {
		line := fmt.Sprintf("%-24s %9s %9s %9s  %s", clip(p.Name, 24), num(p.Prefill.Window, "/s"), num(p.KV.Window, "/s"), num(p.Decode.Window, "/s"), verdicts[p.Name])
		fmt.Fprintln(w, clip(line, width))
		if kv := p.KV.Window; !kv.OK() {
			fmt.Fprintln(w, clip("  KV absent: "+kv.Why, width))
		}
	}
}

// kvAbsent is why the deployment's KV req/s is absent, "" when it is not:
// the ledger's own reason where the point has one (no target exports KV
// bytes, a pool without B_request), so that the advice to set
// -kv-bytes-per-request is given only when B_request is what is missing.
func kvAbsent(snap *Snapshot) string {
	if p := snap.Point; p != nil {
		if kv := p.KV.Window; !kv.OK() {
			return kv.Why
		}
		if len(snap.Pools) > 0 {
			return "" // the pools' own B_request make it
		}
	}
	if snap.KVRequest.Bytes <= 0 {
		return "set -kv-bytes-per-request or -model-config"
	}
	return ""
}
