package tui

import (
	"bytes"
	"fmt"
	"unicode/utf8"
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
	nameW := poolNameWidth(snap, width-56)
	fmt.Fprintf(w, "\n%-*s %9s %9s %9s  %s\n", nameW, "pool", "prefill", "KV", "decode", "verdict ("+win+" window req/s)")
	for _, p := range snap.Pools {
		line := fmt.Sprintf("%-*s %9s %9s %9s  %s", nameW, clipName(p.Name, nameW), num(p.Prefill.Window, "/s"), num(p.KV.Window, "/s"), num(p.Decode.Window, "/s"), verdicts[p.Name])
		fmt.Fprintln(w, clip(line, width))
		if kv := p.KV.Window; !kv.OK() {
			fmt.Fprintln(w, clip("  KV absent: "+kv.Why, width))
		}
	}
}

// poolNameWidth is the column of pool names in a table that leaves room
// columns for them: 24 at least, the longest name where there is room, so
// that at a wide terminal two pools of one model on two engines ("… (vllm)",
// "… (sglang)") read apart.
func poolNameWidth(snap *Snapshot, room int) int {
	return max(24, min(longestPoolName(snap), room))
}

// longestPoolName is the columns of the longest pool name.
func longestPoolName(snap *Snapshot) int {
	n := 0
	for i := range snap.Pools {
		n = max(n, utf8.RuneCountInString(snap.Pools[i].Name))
	}
	return n
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
