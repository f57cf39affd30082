package advice_test

import (
	"math"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
)

// TestRouterArrivalIsTheTruth: the ledger's arrival rate is the
// simulator's true arrivals between the window's first and last scrapes
// (every second here, so over the last 4 s), for the deployment and for the
// router's pool; the advice sizes for it and says so.
func TestRouterArrivalIsTheTruth(t *testing.T) {
	sc := routedScenario(engine.LLMDEPP)
	_, pts, m, err := simtest.Run(sc, 11, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// arrivals is the truth's count of what the router counts by d.
	arrivals := func(d time.Duration) int64 { return m.RouterArrivals("vllm", d) }
	checkArrival(t, sc, pts, arrivals)
	d := advice.EstimateDemand(pts, 60*time.Second)
	truth := float64(arrivals(90*time.Second)-arrivals(30*time.Second)) / 60
	if d.Basis != advice.BasisRouter || !d.Observed.OK() || math.Abs(d.Observed.V-truth) > 0.1*truth {
		t.Errorf("demand %+v from %q, want about %.2f from the router", d.Observed, d.Basis, truth)
	}
	if !d.RemotePrefillShare.OK() || math.Abs(d.RemotePrefillShare.V-0.6) > 0.1 {
		t.Errorf("remote-prefill share %+v, want about 0.6", d.RemotePrefillShare)
	}
}

// TestAnsweringRouterArrival: a router that counts each request once, when
// it is answered (Dynamo's frontend), gives the ledger its answers per
// second, exactly the truth's between the window's scrapes, and over a
// minute the true arrival rate within Poisson noise.
func TestAnsweringRouterArrival(t *testing.T) {
	sc := routedScenario(engine.DynamoFrontend)
	_, pts, m, err := simtest.Run(sc, 12, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	answered := func(d time.Duration) int64 { return m.TruthAt(d).Routers[0].Answered }
	checkArrival(t, sc, pts, answered)
	d := advice.EstimateDemand(pts, 60*time.Second)
	truth := float64(m.RouterArrivals("vllm", 90*time.Second)-m.RouterArrivals("vllm", 30*time.Second)) / 60
	if d.Basis != advice.BasisRouter || !d.Observed.OK() || math.Abs(d.Observed.V-truth) > 0.15*truth {
		t.Errorf("demand %+v from %q, want about %.2f from the router", d.Observed, d.Basis, truth)
	}
}

// routedScenario is one vLLM pool behind router, 40% of its requests sent
// straight to decode.
func routedScenario(router engine.Engine) sim.Scenario {
	return sim.Scenario{
		Name: "routed", Model: "meta-llama/Llama-3.1-8B-Instruct",
		InputTokens: 8192, OutputTokens: 256, KVBytesPerRequest: sim.LlamaKVBytes, StopFraction: 0.3,
		Groups: []sim.Group{{
			Name: "vllm", Engine: string(engine.VLLM), Connector: sim.ConnectorNIXL, Rate: 3,
			Router: string(router), DecodeOnlyFraction: 0.4,
			Prefill:  sim.PrefillSpec{Instances: 2, DP: 1, TokensPerSec: 24576, MaxBatch: 4, KVSlots: 60},
			Transfer: sim.TransferSpec{BandwidthBytesPerSec: 8 * float64(1<<30), Threads: 4},
			Decode:   sim.DecodeSpec{Instances: 2, DP: 1, StepTime: 25 * time.Millisecond, MaxBatch: 32, KVSlots: 60},
		}},
	}
}

// checkArrival compares the ledger's arrival rate, for the deployment and
// the pool, with count's increase between the window's first and last
// scrapes (every second, so over the last 4 s).
func checkArrival(t *testing.T, sc sim.Scenario, pts []ledger.Point, count func(time.Duration) int64) {
	t.Helper()
	checked := 0
	for i, p := range pts {
		at := time.Duration(i+1) * time.Second
		if at < 10*time.Second {
			continue
		}
		want := float64(count(at)-count(at-4*time.Second)) / 4
		pool := p.RouterOf(sc.Model)
		for what, got := range map[string]float64{"deployment": p.Router.Arrival.V, "pool": pool.Arrival.V} {
			if !p.Router.Arrival.OK() || !pool.Arrival.OK() || math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Fatalf("%v: %s arrival %+v / %+v, truth %g", at, what, p.Router.Arrival, pool.Arrival, want)
			}
		}
		checked++
	}
	if checked < 70 {
		t.Fatalf("checked %d points", checked)
	}
}
