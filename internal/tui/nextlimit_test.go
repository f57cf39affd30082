package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// A Balanced verdict names the stage that will limit first, as the advice
// gives it; another verdict leaves it to the advice's own line.
func TestBalancedNamesTheNextLimit(t *testing.T) {
	var a Advice
	a.Advice.LimitsFirst.Stage = "decode"
	a.Advice.LimitsFirst.Text = "decode at 62% of capacity: limits first at ≈ 31 req/s"
	f := func(class diagnose.Class, want bool) {
		t.Helper()
		p := ledger.Point{Time: time.Unix(0, 0)}
		snap := &Snapshot{Point: &p, Verdict: &diagnose.Verdict{Class: class, Headline: string(class)}}
		var b strings.Builder
		RenderFrame(&b, snap, nil, &AdviceResult{&a, nil}, 100)
		head, _, _ := strings.Cut(b.String(), "\nreq/s")
		if got := strings.Contains(head, "· next limit: decode at 62% of capacity: limits first at ≈ 31 req/s"); got != want {
			t.Errorf("%s: next limit under the verdict %v, want %v:\n%s", class, got, want, head)
		}
	}
	f(diagnose.Balanced, true)
	f(diagnose.Class("decode"), false)
}
