package tui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

func TestVerdictTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	pts := make([]ledger.Point, 8)
	for i := range pts {
		pts[i].Time = t0.Add(time.Duration(i) * time.Second)
	}
	ticks := markVerdicts(pts, []api.VerdictSpan{
		{From: t0, To: t0.Add(1 * time.Second), Class: "insufficient"},
		{From: t0.Add(2 * time.Second), To: t0.Add(4 * time.Second), Class: "balanced"},
		{From: t0.Add(5 * time.Second), To: t0.Add(6 * time.Second), Class: "kv"},
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

// Every verdict class the diagnosis can give has its own letter in the
// strip (blank only for too little data).
func TestEveryVerdictClassHasAMark(t *testing.T) {
	seen := map[rune]diagnose.Class{}
	for _, c := range diagnose.Classes {
		r, ok := classMarks[c]
		if !ok {
			t.Errorf("class %q has no mark", c)
			continue
		}
		if other, dup := seen[r]; dup {
			t.Errorf("classes %q and %q share the mark %q", other, c, r)
		}
		seen[r] = c
		if (r == ' ') != (c == diagnose.Insufficient) {
			t.Errorf("class %q: mark %q; only insufficient is blank", c, r)
		}
	}
}
