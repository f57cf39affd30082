package sim

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// routedScenario is the base vLLM group behind llm-d's EPP with 40% of
// its requests sent straight to decode.
func routedScenario() Scenario {
	sc := baseScenario()
	sc.Groups = sc.Groups[:1]
	sc.Groups[0].Router, sc.Groups[0].DecodeOnlyFraction = string(ptd.LLMDEPP), 0.4
	return sc
}

// The router's exposition, read by the EPP adapter, counts exactly the
// truth's arrivals and decisions; decode-only requests complete on decode
// without a prefill completion or a KV transfer.
func TestRouterCountsTheTruth(t *testing.T) {
	sc := routedScenario()
	m, err := NewModel(sc, 3, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	name := sc.Groups[0].Name + "-router"
	infos := m.Instances()
	if last := infos[len(infos)-1]; last.Name != name || last.Role != RoleRouter || last.Engine != string(ptd.LLMDEPP) {
		t.Fatalf("last instance %+v, want the group's router", last)
	}
	r := ptd.NewReader(ptd.EngineAuto, ptd.RoleUnknown, ptd.KVAuto)
	for _, at := range []time.Duration{30 * time.Second, 90 * time.Second} {
		m.AdvanceTo(at)
		body, f, err := m.Exposition(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		o, err := r.Read(body, f.ContentType())
		if err != nil {
			t.Fatalf("%v: %v\n%s", at, err, body)
		}
		tr := m.TruthAt(at)
		if len(tr.Routers) != 1 {
			t.Fatalf("%v: router truth %+v", at, tr.Routers)
		}
		rt := tr.Routers[0]
		got := map[ptd.Metric]float64{}
		for _, c := range o.Counters {
			got[c.Metric] += c.Value
		}
		if o.Engine != ptd.LLMDEPP || o.Role != ptd.Router || got[ptd.RouterRequests] != float64(rt.Arrivals) ||
			got[ptd.RouterDecodeOnly] != float64(rt.DecodeOnly) || got[ptd.RouterRemotePrefill] != float64(rt.RemotePrefill) {
			t.Errorf("%v: read %s/%s %v, truth %+v", at, o.Engine, o.Role, got, rt)
		}
		if rt.Arrivals != rt.DecodeOnly+rt.RemotePrefill {
			t.Errorf("%v: %d arrivals, %d + %d decisions", at, rt.Arrivals, rt.DecodeOnly, rt.RemotePrefill)
		}
		if share := float64(rt.DecodeOnly) / float64(rt.Arrivals); math.Abs(share-0.4) > 0.1 {
			t.Errorf("%v: decode-only share %.2f, want about 0.4", at, share)
		}
		// Prefill completes the remote prefills only; decode all but
		// those still in flight.
		var pre, dec, xfers int64
		for _, it := range tr.Instances {
			pre += it.PrefillCompleted
			dec += it.DecodeCompleted
			xfers += it.KVTransfers
		}
		if pre > rt.RemotePrefill || pre < rt.RemotePrefill-40 {
			t.Errorf("%v: %d prefill completions for %d remote prefills", at, pre, rt.RemotePrefill)
		}
		if xfers > rt.RemotePrefill {
			t.Errorf("%v: %d KV transfers for %d remote prefills", at, xfers, rt.RemotePrefill)
		}
		if dec > rt.Arrivals || dec < rt.Arrivals-80 || dec <= pre {
			t.Errorf("%v: %d decode completions for %d arrivals (%d prefill)", at, dec, rt.Arrivals, pre)
		}
	}
}

// The load model offers prefill and KV the remote prefills only, decode
// every arrival.
func TestLoadModelDecodeOnly(t *testing.T) {
	sc := routedScenario()
	g := sc.LoadModel().Groups[0]
	rate := sc.Groups[0].Rate
	for st, want := range map[string]float64{"prefill": 0.6 * rate, "kv": 0.6 * rate, "decode": rate} {
		if got := g.Stage(st).OfferedPerSec; math.Abs(got-want) > 1e-9 {
			t.Errorf("%s offered %g, want %g", st, got, want)
		}
	}
	sc.Groups[0].DecodeOnlyFraction = 1
	if err := sc.Validate(); err == nil {
		t.Error("a decode-only share of 1 validated")
	}
}

// Over HTTP, the router serves its counters at /metrics, as the truth has
// them at the scrape instant, and /truth carries them.
func TestClusterServesTheRouter(t *testing.T) {
	c, clk := startFake(t, routedScenario())
	var url string
	for _, tg := range c.Targets() {
		if tg.Role == ptd.Router {
			url = tg.URL
		}
	}
	if url == "" || !strings.HasSuffix(url, "/metrics") {
		t.Fatalf("no router target in %+v", c.Targets())
	}
	now := testEpoch.Add(40 * time.Second)
	clk.Set(now)
	body, err := scrape(t, url)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ptd.NewReader(ptd.EngineAuto, ptd.RoleUnknown, ptd.KVAuto).Read(body, "text/plain; version=0.0.4")
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, cv := range o.Counters {
		if cv.Metric == ptd.RouterRequests {
			got += cv.Value
		}
	}
	var js Truth
	getJSON(t, c.TruthURL()+"?at="+strconv.FormatInt(now.UnixNano(), 10), &js)
	if len(js.Routers) != 1 || got != float64(js.Routers[0].Arrivals) || got == 0 {
		t.Errorf("router served %g arrivals, /truth %+v", got, js.Routers)
	}
}

// Dynamo's frontend counts each request once, when it is answered: read by
// its adapter, its counter is the truth's answered requests, which are
// decode's completions.
func TestDynamoFrontendCountsAnswers(t *testing.T) {
	sc := routedScenario()
	sc.Groups[0].Router = string(ptd.DynamoFrontend)
	m, err := NewModel(sc, 5, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.AdvanceTo(60 * time.Second)
	body, f, err := m.Exposition(sc.Groups[0].Name+"-router", nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ptd.NewReader(ptd.EngineAuto, ptd.RoleUnknown, ptd.KVAuto).Read(body, f.ContentType())
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	tr := m.TruthAt(60 * time.Second)
	var dec int64
	for _, it := range tr.Instances {
		dec += it.DecodeCompleted
	}
	var got float64
	for _, c := range o.Counters {
		if c.Metric == ptd.FrontendRequests {
			got += c.Value
		}
	}
	if o.Engine != ptd.DynamoFrontend || o.Role != ptd.Router || got != float64(tr.Routers[0].Answered) || tr.Routers[0].Answered != dec || dec == 0 {
		t.Errorf("read %s/%s %g answered; truth %+v, decode completions %d", o.Engine, o.Role, got, tr.Routers[0], dec)
	}
}
