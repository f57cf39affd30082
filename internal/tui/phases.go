package tui

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// phaseTitles are the columns of the TTFT phase lines, in
// ledger.PhaseNames' order.
var phaseTitles = []string{"queue", "prefill", "boot+alloc", "KV xfer", "1st step"}

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
	head := fmt.Sprintf("\n%-24s", "TTFT phases (mean s)")
	for _, t := range phaseTitles {
		head += fmt.Sprintf(" %10s", t)
	}
	head += fmt.Sprintf(" %10s", "TTFT")
	fmt.Fprintln(w, clip(head, width+1))
	for i := range snap.Pools {
		p := &snap.Pools[i]
		ph := p.TTFTPhases
		if ph == nil {
			a := ledger.AbsentPhases("not in the response")
			ph = &a
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-24s", clip(p.Name, 24))
		for k := range ledger.PhaseNames {
			fmt.Fprintf(&b, " %10s", seconds(*ph.Phase(k)))
		}
		fmt.Fprintf(&b, " %10s", seconds(ph.TTFT))
		fmt.Fprintln(w, clip(b.String(), width))
	}
}

// seconds writes a duration in seconds with three significant digits.
func seconds(v ledger.Num) string {
	if !v.OK() {
		return "—"
	}
	return fmt.Sprintf("%.3g", v.V)
}
