package report

import (
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice/advicetest"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// simInput runs a built-in scenario (changed by edit, if set) in simulated
// time and returns the run as a report's Input, with the model for its
// ground truth.
func simInput(t testing.TB, name string, seed int64, dur time.Duration, edit func(*sim.Scenario)) (Input, *sim.Model) {
	t.Helper()
	sc, err := sim.LoadScenario(name)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&sc)
	}
	res, err := advicetest.RunHistograms(sc, seed, dur)
	if err != nil {
		t.Fatal(err)
	}
	var targets []Target
	for _, in := range res.Instances {
		targets = append(targets, Target{Name: in.Name, Role: in.Role, Engine: in.Engine, Model: sc.Model})
	}
	return Input{
		Meta: Meta{Targets: targets, BRequest: kvsize.Request{Bytes: sc.KVBytesPerRequest, Basis: kvsize.BasisSimulator},
			ConfigHash: "sim-" + name, Version: "test", Interval: time.Second, Window: 5 * time.Second},
		Points: res.Points,
	}, res.Model
}
