package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/sim"
)

func simReport(t *testing.T, name string, seed int64, edit func(*sim.Scenario)) *Report {
	t.Helper()
	in, _ := simInput(t, name, seed, 300*time.Second, edit)
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestCompareAdviceApplied compares a prefill-bound round with the round
// after the advice was applied (one more prefill instance in each group):
// the bottleneck moves off prefill, and prefill's higher rate is beyond
// the runs' noise.
func TestCompareAdviceApplied(t *testing.T) {
	before := simReport(t, "prefill-bound", 11, nil)
	if before.Advice == nil || len(before.Advice.Short) == 0 || before.Advice.Short[0] != "prefill" {
		t.Fatalf("the first round's advice should ask for more prefill instances: %+v", before.Advice)
	}
	after := simReport(t, "prefill-bound", 12, func(sc *sim.Scenario) {
		for i := range sc.Groups {
			sc.Groups[i].Prefill.Instances++
		}
	})
	c := Compare(before, after, "before", "after")
	if c.Verdict.A != diagnose.PrefillBound || !c.Verdict.Moved {
		t.Errorf("verdict %s → %s: want prefill → elsewhere", c.Verdict.A, c.Verdict.B)
	}
	p := c.Stages.Prefill
	if p.Welch == nil || !p.Significant || *p.Diff <= 0 {
		t.Errorf("prefill %v → %v: want a significant rise, got %+v (%s)", *p.RequestsPerSecond[0], *p.RequestsPerSecond[1], p.Welch, p.Absent)
	}
	// A significant rise of a stage's rate is an improvement, and the
	// HTML marks it as one, not in the warning's red; a fall is worse.
	marked := func(a, b *Report, want string) {
		t.Helper()
		c := Compare(a, b, "a", "b")
		page, err := c.HTML()
		if err != nil {
			t.Fatal(err)
		}
		row := regexp.MustCompile(`(?s)<tr data-stage="prefill">.*?</tr>`).Find(page)
		if !strings.Contains(string(row), `data-direction="`+want+`"`) {
			t.Errorf("prefill %+v: the row is not marked %s:\n%s", c.Stages.Prefill.Diff, want, row)
		}
	}
	marked(before, after, "better")
	marked(after, before, "worse")
	t.Logf("%s", c.Markdown())
}

// TestCompareSameConfigNotSignificant compares two rounds of the same
// configuration with different seeds: no stage's difference is beyond the
// noise, and the verdict stays.
func TestCompareSameConfigNotSignificant(t *testing.T) {
	a := simReport(t, "balanced", 21, nil)
	b := simReport(t, "balanced", 22, nil)
	c := Compare(a, b, "seed 21", "seed 22")
	for _, s := range c.stageList() {
		if s.D.Welch == nil {
			t.Fatalf("%s: no test: %s", s.Name, s.D.Absent)
		}
		if s.D.Significant {
			t.Errorf("%s: %v vs %v reported beyond noise (t = %.2f)", s.Name, *s.D.RequestsPerSecond[0], *s.D.RequestsPerSecond[1], s.D.Welch.T)
		}
	}
	if c.Verdict.Moved {
		t.Errorf("verdict moved %s → %s on the same configuration", c.Verdict.A, c.Verdict.B)
	}
	checkRunsJSON(t, a, b)
}

// checkRunsJSON: the comparison's JSON writes its runs' ranges in RFC
// 3339, as every time of a report; and a run is not compared with itself.
func checkRunsJSON(t *testing.T, a, other *Report) {
	t.Helper()
	c := Compare(a, a, "a", "b")
	b, err := c.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Runs []struct{ From, To string }
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Runs {
		for _, s := range []string{r.From, r.To} {
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				t.Errorf("runs[].from/to %q is not RFC 3339: %v", s, err)
			}
		}
	}
	if why := SameRun(a, a); why == "" {
		t.Error("a run and itself are not said to be one run")
	}
	if why := SameRun(a, other); why != "" {
		t.Errorf("two seeds said to be one run: %s", why)
	}
	a2, o2 := *a, *other
	a2.Run.RunID, o2.Run.RunID = "r1", "r1"
	if SameRun(&a2, &o2) == "" {
		t.Error("two reports of one run id are not said to be one run")
	}
}

// The comparison gives each run's KV bytes/s beside its stages' rates.
func TestCompareKVBytes(t *testing.T) {
	a := simReport(t, "kv-bound", 21, nil)
	b := simReport(t, "kv-bound", 22, nil)
	c := Compare(a, b, "a", "b")
	if c.KV.BytesPerSecond[0] == nil || c.KV.BytesPerSecond[1] == nil || c.KV.Relative == nil {
		t.Fatalf("KV bytes/s %+v", c.KV)
	}
	want := "| KV transfer | " + kvCell(a.KV.BytesPerSecond, a.KV.BytesCI95) + " | " + kvCell(b.KV.BytesPerSecond, b.KV.BytesCI95) + " |"
	if md := string(c.Markdown()); !strings.Contains(md, want) {
		t.Errorf("the Markdown has no %q", want)
	}
	page, err := c.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `data-key="kv.0">`+kvCell(a.KV.BytesPerSecond, a.KV.BytesCI95)) {
		t.Error("the HTML has no KV bytes/s of run A")
	}
}
