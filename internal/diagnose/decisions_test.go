package diagnose

import (
	"regexp"
	"testing"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestRouterDecisionsCountDecodeOnly: where the router exports its P/D
// decision, the traffic note counts decode-only requests from it (4 of 10
// req/s here), not from decode completions beyond prefill; the verdict stays
// Balanced. A router without decisions leaves the inferred note.
func TestRouterDecisionsCountDecodeOnly(t *testing.T) {
	w := balancedWorld()
	w.p, w.kv, w.d = konst(6), konst(6), konst(10)
	re := regexp.MustCompile(`the router sent (\d+\.\d) req/s straight to decode and (\d+\.\d) req/s to remote prefill: (\d+)% are served without remote prefill`)
	for seed := int64(1); seed <= 5; seed++ {
		pts := w.points(40, seed)
		for i := range pts {
			pts[i].Router = ledger.NoRouter("")
			pts[i].Router.DecodeOnly, pts[i].Router.RemotePrefill = ledger.Val(4), ledger.Val(6)
		}
		v := Diagnose(pts, Config{})
		if v.Class != Balanced {
			t.Errorf("seed %d: %q, want balanced: %q", seed, v.Class, v.Evidence)
		}
		var m []string
		for _, n := range v.Traffic {
			if m = re.FindStringSubmatch(n); m != nil {
				break
			}
		}
		if m == nil {
			t.Errorf("seed %d: no router-decision line in %q", seed, v.Traffic)
			continue
		}
		if m[1] != "4.0" || m[2] != "6.0" || m[3] != "40" {
			t.Errorf("seed %d: %q, want 4.0 decode-only, 6.0 remote, 40%%", seed, m[0])
		}

		for i := range pts {
			pts[i].Router = ledger.NoRouter("")
		}
		for _, n := range Diagnose(pts, Config{}).Traffic {
			if re.MatchString(n) {
				t.Errorf("seed %d: a router without decisions noted as deciding: %q", seed, n)
			}
		}
	}
}

// A router is read with the pool it serves: it makes no verdict group of
// its own, whatever the grouping.
func TestRouterMakesNoGroup(t *testing.T) {
	w := balancedWorld()
	pts := w.points(40, 1)
	for i := range pts {
		pts[i].Instances = append(pts[i].Instances, ledger.InstancePoint{Target: "epp", Role: "router", Engine: "llm-d-epp", Up: true,
			Instant: ledger.Absent("no requests_completed counter in the exposition"), Window: ledger.Absent("no requests_completed counter in the exposition")})
	}
	v := Diagnose(pts, Config{})
	for _, g := range v.Groups {
		if g.Group == "llm-d-epp" {
			t.Errorf("a group of the router alone: %+v", g)
		}
	}
	if v.Class != Balanced {
		t.Errorf("deployment %q, want balanced: %q", v.Class, v.Evidence)
	}
}
