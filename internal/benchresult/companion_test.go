package benchresult

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult/benchgen"
)

// TestAIPerfCompanions: AIPerf's summary and records side by side read as
// AIPerf's own figures placed by the records' wall-clock times, from
// either file, and a recording keeps both.
func TestAIPerfCompanions(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	run := benchgen.Run{SLOTTFT: 0.15}
	for i := range 20 {
		run.Requests = append(run.Requests, benchgen.Request{ID: "r", Start: t0.Add(time.Duration(i) * 100 * time.Millisecond),
			TTFT: 0.1 + float64(i%5)*0.02, E2E: 1 + float64(i%3)*0.1, OutputTokens: 32, InputTokens: 128})
	}
	fig := run.Figures()
	dir := t.TempDir()
	prof, recs := filepath.Join(dir, aiperfProfileName), filepath.Join(dir, aiperfRecordsName)
	for p, b := range map[string][]byte{prof: run.AIPerfProfile(), recs: run.AIPerfRecords()} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{prof, recs} {
		r, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Format != AIPerfProfile || r.Clock != clockWall || !r.Start.Equal(fig.Start) || r.Goodput == nil || *r.Goodput != fig.Goodput || len(r.Requests) != 20 {
			t.Errorf("Load(%s): %s, %s clock from %s, goodput %v, %d requests; want AIPerf's summary (its goodput %g) placed at %s with 20 requests",
				filepath.Base(p), r.Format, r.Clock, r.Start, r.Goodput, len(r.Requests), fig.Goodput, fig.Start)
		}
	}
	if got := Companions(recs); len(got) != 1 || got[0] != prof {
		t.Errorf("companions of the records: %v", got)
	}
	rec := t.TempDir()
	for _, p := range []string{recs, prof} {
		if _, err := Keep(rec, p); err != nil {
			t.Fatal(err)
		}
	}
	if k := Kept(rec); filepath.Base(k) != aiperfRecordsName {
		t.Errorf("kept %s, want the records first", k)
	}
}
