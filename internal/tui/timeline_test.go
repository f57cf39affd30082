package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

func TestVerdictTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	pts := make([]ledger.Point, 8)
	for i := range pts {
		pts[i].Time = t0.Add(time.Duration(i) * time.Second)
	}
	ticks := markVerdicts(pts, []api.VerdictSpan{
		{From: t0, To: t0.Add(1 * time.Second), Stage: "insufficient"},
		{From: t0.Add(2 * time.Second), To: t0.Add(4 * time.Second), Stage: "balanced"},
		{From: t0.Add(5 * time.Second), To: t0.Add(6 * time.Second), Stage: "kv"},
	})
	var got []string
	for _, p := range ticks {
		got = append(got, string(p.Verdict))
	}
	if strings.Join(got, ",") != "insufficient,insufficient,balanced,balanced,balanced,kv,kv," {
		t.Fatalf("verdicts %q", got)
	}
	var s Snapshot
	if err := json.Unmarshal([]byte(snapJSON), &s); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Render(&b, &s, ticks, 120)
	// Eight points of history, then the snapshot's own kv verdict.
	if out := b.String(); !strings.Contains(out, "Verdict") || !strings.Contains(out, "  ···KK K\n") {
		t.Errorf("frame lacks the verdict strip:\n%s", out)
	}
}
