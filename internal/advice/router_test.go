package advice

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// routedPoints are 30 s of a pool whose prefill completes 6 req/s with a
// steady queue while its router counts 10 arrivals/s, 4 of them sent
// straight to decode.
func routedPoints(router bool) []ledger.Point {
	t0 := time.Unix(1_700_000_000, 0)
	var pts []ledger.Point
	for i := 0; i < 30; i++ {
		p := ledger.Point{Time: t0.Add(time.Duration(i) * time.Second), Router: ledger.NoRouter("")}
		p.Prefill.Window, p.Prefill.Waiting, p.Prefill.Running = ledger.Val(6), ledger.Val(2), ledger.Val(4)
		p.Decode.Window = ledger.Val(10)
		p.KV.Window, p.KV.BytesWindow = ledger.Val(6), ledger.Val(6<<30)
		if router {
			p.Router.Instances, p.Router.Up = 1, 1
			p.Router.Arrival = ledger.Val(10)
			p.Router.RemotePrefill, p.Router.DecodeOnly = ledger.Val(6), ledger.Val(4)
		}
		pts = append(pts, p)
	}
	return pts
}

// With a router the advice sizes for the router's arrivals and says so;
// without one it infers them from prefill as before.
func TestDemandFromRouter(t *testing.T) {
	d := EstimateDemand(routedPoints(true), 20*time.Second)
	if !d.Observed.OK() || d.Observed.V != 10 || d.Basis != BasisRouter {
		t.Errorf("with a router: observed %+v, basis %q; want 10 from %q", d.Observed, d.Basis, BasisRouter)
	}
	if !d.RemotePrefillShare.OK() || math.Abs(d.RemotePrefillShare.V-0.6) > 1e-9 {
		t.Errorf("remote-prefill share %+v, want 0.6", d.RemotePrefillShare)
	}
	d = EstimateDemand(routedPoints(false), 20*time.Second)
	if !d.Observed.OK() || math.Abs(d.Observed.V-6) > 1e-9 || d.Basis != BasisInferred {
		t.Errorf("without a router: observed %+v, basis %q; want 6 %q", d.Observed, d.Basis, BasisInferred)
	}
	if d.RemotePrefillShare.OK() || !strings.Contains(d.RemotePrefillShare.Why, "no router") {
		t.Errorf("without a router: remote-prefill share %+v, want absent", d.RemotePrefillShare)
	}
}

// Prefill and the KV transfer are sized for the remote prefills only,
// decode for every arrival: 10 req/s of which 6 remote, at 2 req/s per
// prefill instance and 2.5 per decode instance, no headroom.
func TestAdviseSizesPrefillForRemoteShare(t *testing.T) {
	d := EstimateDemand(routedPoints(true), 20*time.Second)
	caps := []Capacity{
		{Stage: stage.Prefill, PerInstance: ledger.Val(2), Instances: 1},
		{Stage: stage.KV, PerInstance: ledger.Absent("not learned"), AtLeast: ledger.Absent("not learned"), Instances: 1},
		{Stage: stage.Decode, PerInstance: ledger.Val(2.5), Instances: 1},
	}
	a, err := Advise(caps, d, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Prefill.Instances.OK() || a.Prefill.Instances.V != 3 {
		t.Errorf("prefill instances %+v, want 3 (6 remote req/s ÷ 2)", a.Prefill.Instances)
	}
	if !a.Decode.Instances.OK() || a.Decode.Instances.V != 4 {
		t.Errorf("decode instances %+v, want 4 (10 req/s ÷ 2.5)", a.Decode.Instances)
	}
}
