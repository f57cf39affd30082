package sim

import (
	"math"
	"strings"
	"testing"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// delayedScenario is the base vLLM group behind router rt, each arrival
// spending an exponential 0.2 s in it.
func delayedScenario(rt string) Scenario {
	sc := baseScenario()
	sc.Groups = sc.Groups[:1]
	sc.Groups[0].Router, sc.Groups[0].RouterDelay = rt, 0.2
	return sc
}

// A router's own time: its histograms time each dispatched request's wait
// in it, the phase truth's Router is that wait, and the engines time the
// request from the dispatch (the client's TTFT is the router's wait longer
// than the engines' own).
func TestRouterDelayTimesTheTruth(t *testing.T) {
	f := func(rt, family, label string) {
		t.Run(rt, func(t *testing.T) {
			sc := delayedScenario(rt)
			g := sc.Groups[0]
			m, err := NewModel(sc, 3, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			m.AdvanceTo(90 * time.Second)
			body, _, err := m.Exposition(g.Name+"-router", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(body), label) {
				t.Fatalf("no %s in\n%s", label, body)
			}
			fams := parseExpo(t, body)
			sum, count, ok := sumHist(fams, family)
			if !ok || count < 100 {
				t.Fatalf("%s: %d observations", family, count)
			}
			if arr := m.RouterArrivals(g.Name, m.Now()); int64(count) != arr {
				t.Errorf("%s counts %d requests, the router dispatched %d", family, count, arr)
			}
			if mean := sum / float64(count); math.Abs(mean-0.2) > 0.03 {
				t.Errorf("%s: mean %.3f s, want about 0.2", family, mean)
			}
			pt := m.PhaseTruth(g.Name)
			if mean := pt.Router / float64(pt.Requests); math.Abs(mean-0.2) > 0.03 {
				t.Errorf("truth: router phase %.3f s, want about 0.2", mean)
			}
			// The client's TTFT against the engines': the prefill leg's TTFT
			// histogram plus decode's leg, from the dispatch.
			ttft, _ := m.RequestTruth(g.Name)
			var user float64
			for _, l := range ttft {
				user += l.Seconds
			}
			user /= float64(len(ttft))
			var pSum, dSum float64
			var pN, dN uint64
			for _, in := range m.Instances() {
				if in.Role == RoleRouter {
					continue
				}
				b, _, err := m.Exposition(in.Name, nil)
				if err != nil {
					t.Fatal(err)
				}
				s, n, _ := sumHist(parseExpo(t, b), "vllm:time_to_first_token_seconds")
				if in.Role == RolePrefill {
					pSum, pN = pSum+s, pN+n
				} else {
					dSum, dN = dSum+s, dN+n
				}
			}
			engines := pSum/float64(pN) + dSum/float64(dN)
			router := pt.Router / float64(pt.Requests)
			t.Logf("client TTFT %.3f s, engines' legs %.3f s, router %.3f s", user, engines, router)
			if math.Abs(user-engines-router) > 0.1*user {
				t.Errorf("client TTFT %.3f s, want the engines' %.3f s + the router's %.3f s", user, engines, router)
			}
			if rt == string(ptd.DynamoFrontend) {
				s, n, _ := sumHist(fams, "dynamo_frontend_time_to_first_token_seconds")
				if int(n) != len(ttft) || math.Abs(s/float64(n)-user) > 1e-9 {
					t.Errorf("frontend TTFT: %d observations of mean %.4f s, truth %d of %.4f s", n, s/float64(n), len(ttft), user)
				}
			}
		})
	}
	f(string(ptd.LLMDEPP), "llm_d_epp_flow_control_request_queue_duration_seconds", `outcome="Dispatched",priority="0",target_model_name=`)
	f(string(ptd.DynamoFrontend), "dynamo_frontend_stage_duration_seconds", `{stage="preprocess",le="0.0001"}`)
}

// router_delay needs a router and is not negative.
func TestRouterDelayValidates(t *testing.T) {
	f := func(router string, delay float64, ok bool) {
		sc := baseScenario()
		sc.Groups[0].Router, sc.Groups[0].RouterDelay = router, delay
		if err := sc.Validate(); (err == nil) != ok {
			t.Errorf("router %q delay %g: %v", router, delay, err)
		}
	}
	f("", 0.1, false)
	f(string(ptd.LLMDEPP), -0.1, false)
	f(string(ptd.LLMDEPP), 0.1, true)
	f("", 0, true)
}
