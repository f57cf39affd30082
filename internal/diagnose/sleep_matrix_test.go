package diagnose_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// The matrix's sleep cell: one of three vLLM decode instances in sleep
// mode for the whole run, taking no traffic. The ledger counts it apart
// from decode's serving instances, as the simulator's truth has it; the
// verdict says so in a note; the instance table never calls it stalled or
// slow, and its zero rate does not set its peers' norm.
func TestAsleepInstanceIsNeitherDownNorStalled(t *testing.T) {
	fl := flavours[1] // vLLM over NIXL
	g := group(fl, fl.engine, sim.StageNone, 1, false)
	g.Decode.Instances = 3
	sc := scenario("asleep", g)
	sc.Asleep = []string{g.Name + "-d2"}
	pts, model, _ := judgedPoolRun(t, sc, 3, 60*time.Second, 30*time.Second, 10*time.Second, func(at time.Duration, gv diagnose.GroupVerdict) string {
		if !slices.ContainsFunc(gv.Notes, func(n string) bool {
			return strings.Contains(n, "asleep (sleep mode)") && strings.Contains(n, sc.Asleep[0])
		}) {
			return fmt.Sprintf("at %v: no note of %s asleep in %q", at, sc.Asleep[0], gv.Notes)
		}
		return ""
	})
	last := pts[len(pts)-1]
	truth := model.TruthAt(last.Time.Sub(epoch))
	var asleep []string
	awake := 0
	for _, it := range truth.Instances {
		switch {
		case it.Role != sim.RoleDecode:
		case it.Asleep:
			asleep = append(asleep, it.Name)
		default:
			awake++
		}
	}
	if !slices.Equal(last.Decode.Asleep, asleep) || last.Decode.Instances != awake || last.Decode.Up != awake {
		t.Errorf("decode: %d of %d up, asleep %v; truth: %d awake, asleep %v",
			last.Decode.Up, last.Decode.Instances, last.Decode.Asleep, awake, asleep)
	}
	st := diagnose.ClassifyInstances(last.Instances, 5, nil)
	for i, ip := range last.Instances {
		isAsleep := slices.Contains(asleep, ip.Target)
		if (ip.Sleep != "") != isAsleep {
			t.Errorf("%s: sleep %q, truth asleep %v", ip.Target, ip.Sleep, isAsleep)
		}
		if st[i].Status != diagnose.StatusOK {
			t.Errorf("%s: %s %q", ip.Target, st[i].Status, st[i].Flags)
		}
		if isAsleep && !slices.ContainsFunc(st[i].Flags, func(f string) bool { return strings.HasPrefix(f, "asleep: sleep mode, level 1") }) {
			t.Errorf("%s asleep, flags %q", ip.Target, st[i].Flags)
		}
	}
}
