package tui

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// failureTitles are the columns of the KV failure lines, one per kind in
// ledger.FailureKinds' order.
var failureTitles = map[ledger.FailureKind]string{
	"network": "network", "timeout": "timeout", "expiry": "expiry",
	"notification": "notify", "unclassified": "unclass", ledger.KindRecomputed: "recomp.",
	ledger.KindShed: "shed", ledger.KindMigrated: "migrated",
}

// failures writes each pool's KV failures by class as shares of the
// transfers attempted, and recompute on decode as its share of decode's
// prompt tokens, and load shed before the engine as its share of the
// offered load (docs/pools.md), where any source of any pool counts one;
// a kind no source of the pool counts is "—", never 0%.
func failures(w *bytes.Buffer, snap *Snapshot, width int) {
	counted := false
	for i := range snap.Pools {
		for _, k := range ledger.FailureKinds {
			if f := snap.Pools[i].KVFailures; f != nil && f.Kind(k).PerSecond.OK() {
				counted = true
			}
		}
	}
	if !counted {
		return
	}
	// Migrations have a column only where some pool's routers count them,
	// so that a deployment without such routers keeps to 80 columns.
	var kinds []ledger.FailureKind
	for _, k := range ledger.FailureKinds {
		shown := k != ledger.KindMigrated
		for i := range snap.Pools {
			if f := snap.Pools[i].KVFailures; f != nil && f.Kind(k).PerSecond.OK() {
				shown = true
			}
		}
		if shown {
			kinds = append(kinds, k)
		}
	}
	nameW := poolNameWidth(snap, width-9*len(kinds))
	head := fmt.Sprintf("\n%-*s", nameW, "KV failures (share)")
	for _, k := range kinds {
		head += fmt.Sprintf(" %8s", failureTitles[k])
	}
	fmt.Fprintln(w, clip(head, width+1))
	for i := range snap.Pools {
		p := &snap.Pools[i]
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", nameW, clipName(p.Name, nameW))
		for _, k := range kinds {
			r := ledger.Absent("not in the response")
			if f := p.KVFailures; f != nil {
				r = f.Kind(k).Ratio
			}
			fmt.Fprintf(&b, " %8s", share(r))
		}
		fmt.Fprintln(w, clip(b.String(), width))
	}
}

// share is a ratio as a percentage with one decimal: a failure share of
// 0.4% is worth seeing.
func share(v ledger.Num) string {
	if !v.OK() {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", v.V*100)
}
