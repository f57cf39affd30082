package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// A pool's KV failures are a line of shares: a class its sources count
// shows its share, one they do not count is "—", never 0%; without any
// counted class in any pool there is no such line at all.
func TestFailureLines(t *testing.T) {
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	chat := ledger.AbsentFailures("no target of the pool counts it")
	chat.Network = ledger.FailureRate{PerSecond: ledger.Val(6), Ratio: ledger.Val(0.06)}
	chat.Expiry = ledger.FailureRate{PerSecond: ledger.Val(0), Ratio: ledger.Val(0)}
	chat.Recomputed = ledger.FailureRate{PerSecond: ledger.Val(1000), Ratio: ledger.Val(0.125)}
	chat.Shed = ledger.FailureRate{PerSecond: ledger.Val(0.5), Ratio: ledger.Val(0.031)}
	none := ledger.AbsentFailures("none")
	// batch comes from a server that sends no failures.
	s.Pools = []api.Pool{{Name: "chat", KVFailures: &chat}, {Name: "batch"}}
	var b strings.Builder
	Render(&b, &s, nil, 160)
	var line, batch string
	for l := range strings.Lines(b.String()) {
		switch f := strings.Fields(l); {
		case len(f) > 0 && f[0] == "chat":
			line = l
		case len(f) > 0 && f[0] == "batch":
			batch = l
		}
	}
	// network timeout expiry notify unclass recomp. shed
	if f := strings.Fields(line); len(f) != 8 || strings.Join(f[1:], " ") != "6.0% — 0.0% — — 12.5% 3.1%" {
		t.Errorf("chat's failure line %q, want 6.0%% — 0.0%% — — 12.5%% 3.1%%\n%s", line, b.String())
	}
	if f := strings.Fields(batch); len(f) != 8 || strings.Join(f[1:], " ") != "— — — — — — —" {
		t.Errorf("batch's failure line %q, want every kind absent", batch)
	}

	s.Pools = []api.Pool{{Name: "batch", KVFailures: &none}, {Name: "old"}}
	b.Reset()
	Render(&b, &s, nil, 160)
	if strings.Contains(b.String(), "KV failures") {
		t.Errorf("a failure table where no source counts any:\n%s", b.String())
	}
}
