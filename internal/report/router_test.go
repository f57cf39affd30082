package report

import (
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// The advice line says when its arrival rate was measured at a router, and
// only then.
func TestMarkdownSaysRouterMeasured(t *testing.T) {
	for basis, want := range map[string]bool{advice.BasisRouter: true, advice.BasisInferred: false} {
		r := Report{Advice: &advice.Advice{Demand: advice.Demand{Target: ledger.Val(7.5), Basis: basis}}}
		got := strings.Contains(string(r.Markdown()), "Advice for 7.5 req/s (arrivals measured at the router) at")
		if got != want {
			t.Errorf("basis %q: router-measured said %v, want %v:\n%s", basis, got, want, r.Markdown())
		}
	}
}
