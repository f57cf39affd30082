package record

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/report"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/slo"
)

// liveSLO is what the API serves of the SLO at one tick: the
// deployment's and each pool's.
type liveSLO struct {
	at    time.Time
	whole string
	pools map[string]string
}

// TestRecordedSLOIsTheLiveOne: the report of a recording reads the SLO of a
// span as the live API read its window ending at the same instant: each
// role's, and the whole request's, per pool and for the deployment. The
// run is prefill-bound, so the whole request (a bound over vLLM's two
// legs; SGLang's decode times from the arrival) is far below the decode
// leg's, which a report must not give as the request's.
func TestRecordedSLOIsTheLiveOne(t *testing.T) {
	sc, err := sim.LoadScenario("prefill-bound")
	if err != nil {
		t.Fatal(err)
	}
	th := slo.Thresholds{TTFT: 2, ITL: 0.05, E2E: 20}
	const window = 5 * time.Second
	dir := t.TempDir()
	var srv *httptest.Server
	var live []liveSLO
	tick := 0
	liveRunOf(t, dir, sc, 60, nil, (*Recorder).Close, func(l *ledger.Ledger) {
		if srv == nil {
			srv = httptest.NewServer((&api.Server{Ledger: l, SLO: th}).Handler())
		}
		if tick++; tick%15 != 0 {
			return
		}
		p, _ := l.Latest()
		live = append(live, askLiveSLO(t, srv.URL, p.Time))
	})
	srv.Close()
	run, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	in := report.Input{Meta: report.Meta{SLO: th}, Buckets: func(from, to time.Time) (report.Latencies, error) {
		whole, pools, err := run.Latencies(from, to)
		return report.Latencies{Whole: whole, Pools: pools}, err
	}}
	farBelow := false
	for _, want := range live {
		names := make([]string, 0, len(want.pools))
		for n := range want.pools {
			names = append(names, n)
		}
		if len(names) != 2 {
			t.Fatalf("at %v the API served %d pools, want vLLM's and SGLang's", want.at, len(names))
		}
		rep, why, pools := report.SLOOver(in, want.at.Add(-window), want.at, names...)
		if rep == nil {
			t.Fatalf("at %v: the report's SLO is absent: %s", want.at, why)
		}
		if got := mustJSON(t, rep); got != want.whole {
			t.Errorf("at %v the report's SLO\n%s\nthe live API's\n%s", want.at, got, want.whole)
		}
		for _, p := range pools {
			if got := mustJSON(t, p.SLO); got != want.pools[p.Name] {
				t.Errorf("at %v pool %s: the report's SLO (%s)\n%s\nthe live API's\n%s", want.at, p.Name, p.SLOAbsent, got, want.pools[p.Name])
			}
		}
		if r, d := rep.Request, rep.Decode; r != nil && d != nil && r.Metrics[0].Bound != nil && d.Metrics[0].Within != nil &&
			r.Metrics[0].Bound.Max < d.Metrics[0].Within.Fraction-0.3 {
			farBelow = true
		}
	}
	if len(live) < 3 || !farBelow {
		t.Errorf("%d instants compared; the whole request's TTFT never read far below the decode leg's: the run proves little", len(live))
	}
}

// askLiveSLO reads the deployment's SLO from /api/v1/advice and each
// pool's from /api/v1/snapshot, each as advice.SLOReport's JSON.
func askLiveSLO(t *testing.T, url string, at time.Time) liveSLO {
	t.Helper()
	get := func(path string, v any) {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	var adv struct {
		SLO *advice.SLOReport `json:"slo"`
	}
	get("/api/v1/advice", &adv)
	var snap struct {
		Pools []struct {
			Name string            `json:"name"`
			SLO  *advice.SLOReport `json:"slo"`
		} `json:"pools"`
	}
	get("/api/v1/snapshot?instances=0", &snap)
	out := liveSLO{at: at, whole: mustJSON(t, adv.SLO), pools: map[string]string{}}
	for _, p := range snap.Pools {
		out.pools[p.Name] = mustJSON(t, p.SLO)
	}
	return out
}
