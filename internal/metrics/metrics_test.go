package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ptdmon/ptdmon/internal/buildinfo"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// The cost of watching a target is exported per target, next to ptdmon's
// own process, runtime and build metrics.
func TestCostMetrics(t *testing.T) {
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second})
	l.SetTargets([]engine.Target{{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM}})
	now := time.Now()
	obs := &engine.Observation{Engine: engine.VLLM, Role: engine.Prefill, Samples: 1504}
	l.Record(ledger.Scrape{Target: "p0", Time: now, Bytes: 182191, Samples: 1504, Obs: obs})
	l.Record(ledger.Scrape{Target: "p0", Time: now.Add(time.Second), Bytes: 182191, Samples: 1504, Obs: obs})
	l.Record(ledger.Scrape{Target: "p0", Time: now.Add(2 * time.Second), Bytes: 100, Err: errFailed})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&Collector{Ledger: l, Now: func() time.Time { return now.Add(2 * time.Second) }})
	want := `
# HELP ptd_scrape_bytes_total Body bytes fetched from the target (after decompression).
# TYPE ptd_scrape_bytes_total counter
ptd_scrape_bytes_total{target="p0"} 364482
# HELP ptd_scrape_samples_total Samples in the target's bodies that were read successfully, used by ptdmon or not.
# TYPE ptd_scrape_samples_total counter
ptd_scrape_samples_total{target="p0"} 3008
# HELP ptd_build_info Always 1; the labels name the running build of ptdmon.
# TYPE ptd_build_info gauge
ptd_build_info{goversion="` + buildinfo.Get().GoVersion + `",revision="` + buildinfo.Get().Revision + `",version="` + buildinfo.Get().Version + `"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ptd_scrape_bytes_total", "ptd_scrape_samples_total", "ptd_build_info"); err != nil {
		t.Error(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range fams {
		have[f.GetName()] = true
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_inuse_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes"} {
		if !have[name] {
			t.Errorf("%s not exported", name)
		}
	}
}

type failed struct{}

func (failed) Error() string { return "connection refused" }

var errFailed = failed{}
