package record

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// A recording's capacities at its end are the live advisor's: the learner
// fed the run's points as they came, the models it served with them.
func TestPriorIsTheLiveAdvisors(t *testing.T) {
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	live := advice.NewLearner(advice.Options{Window: 5 * time.Second})
	liveRunOf(t, dir, sc, 80, nil, (*Recorder).Close, func(l *ledger.Ledger) {
		p, _ := l.Latest()
		live.Observe(p)
	})
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	p, err := run.Prior()
	if err != nil {
		t.Fatal(err)
	}
	want := live.Capacities()
	// As the API writes them: instants compare by their time, not their zone.
	got, _ := json.Marshal(p.Capacities)
	if wj, _ := json.Marshal(want); string(got) != string(wj) {
		t.Errorf("recorded run's capacities\n%+v\nlive\n%+v", p.Capacities, want)
	}
	if want[0].Basis != advice.BasisSaturated || len(p.Models) == 0 || p.Models[0] != sc.Model || !strings.Contains(p.From, dir) {
		t.Errorf("prior from %q of %v: prefill %s", p.From, p.Models, want[0].Basis)
	}
}
