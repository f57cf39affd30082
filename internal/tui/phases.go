package tui

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// phaseTitles are the columns of the TTFT phase lines, in
// ledger.PhaseNames' order.
var phaseTitles = []string{"router", "queue", "prefill", "bootstr.", "handover", "KV xfer", "1st step"}

// routerPhase says whether phase k is timed by routers only (the router
// phase, the hand-over): its column is shown only where some pool has it,
// so that a deployment without such routers keeps to 80 columns.
func routerPhase(k int) bool {
	n := ledger.PhaseNames[k]
	return n == "router_seconds" || n == "handover_seconds"
}

// phases writes where each pool's TTFT goes: the mean seconds of each
// phase over the window beside the measured TTFT (docs/pools.md), where
// any pool has one; a phase without a source is "—", never 0.
func phases(w *bytes.Buffer, snap *Snapshot, width int) {
	any := false
	for i := range snap.Pools {
		if ph := snap.Pools[i].TTFTPhases; ph != nil {
			for k := range ledger.PhaseNames {
				any = any || ph.Phase(k).OK()
			}
		}
	}
	if !any {
		return
	}
	var cols []int
	for k := range ledger.PhaseNames {
		shown := !routerPhase(k)
		for i := range snap.Pools {
			if ph := snap.Pools[i].TTFTPhases; ph != nil && ph.Phase(k).OK() {
				shown = true
			}
		}
		if shown {
			cols = append(cols, k)
		}
	}
	const col = 9
	nameW := max(16, min(longestPoolName(snap), width-col*(len(cols)+2)))
	head := fmt.Sprintf("\n%-*s", nameW, "TTFT (mean s)")
	for _, k := range cols {
		head += fmt.Sprintf(" %*s", col-1, phaseTitles[k])
	}
	for _, t := range []string{"untimed", "TTFT"} {
		head += fmt.Sprintf(" %*s", col-1, t)
	}
	fmt.Fprintln(w, clip(head, width+1))
	sources := map[string][]string{}
	var order []string
	for i := range snap.Pools {
		p := &snap.Pools[i]
		ph := p.TTFTPhases
		if ph == nil {
			a := ledger.AbsentPhases("not in the response")
			ph = &a
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", nameW, clipName(p.Name, nameW))
		for _, k := range cols {
			fmt.Fprintf(&b, " %*s", col-1, seconds(*ph.Phase(k)))
		}
		fmt.Fprintf(&b, " %*s %*s", col-1, seconds(ph.Untimed), col-1, seconds(ph.TTFT))
		fmt.Fprintln(w, clip(b.String(), width))
		src := ph.TTFTSource
		if src == "" {
			src = "nothing that times it (" + ph.TTFT.Why + ")"
		}
		if sources[src] == nil {
			order = append(order, src)
		}
		sources[src] = append(sources[src], p.Name)
	}
	// Which TTFT this is: the whole request's, and what timed it.
	line := "TTFT of the whole request, from "
	if len(order) == 1 {
		line += order[0]
	} else {
		var parts []string
		for _, src := range order {
			parts = append(parts, src+" ("+strings.Join(sources[src], ", ")+")")
		}
		line += strings.Join(parts, "; ")
	}
	say(w, "  ", "    ", line, width)
}

// clipName keeps a pool's name within n columns by cutting its middle,
// so that the engine that ends "MODEL (ENGINE)" stays in view.
func clipName(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	head := n / 3
	return string(r[:head]) + "…" + string(r[len(r)-(n-head-1):])
}

// seconds writes a duration in seconds with three significant digits.
func seconds(v ledger.Num) string {
	if !v.OK() {
		return "—"
	}
	return fmt.Sprintf("%.3g", v.V)
}
