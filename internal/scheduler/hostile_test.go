package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// churned is a vLLM exposition with n series of an ignored family whose
// label values are new in every scrape k, and one counter ptdmon reads.
func churned(k, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 1\n")
	fmt.Fprintf(&b, "# TYPE vllm:request_success counter\nvllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} %d\n", 10*k)
	b.WriteString("# TYPE app_requests counter\n")
	for i := range n {
		fmt.Fprintf(&b, "app_requests_total{id=\"%d-%d\"} 1\n", k, i)
	}
	return []byte(b.String())
}

// Label churn in a family ptdmon ignores, at a rate that fills the reader's
// series cache: reads keep succeeding, and a cache that filled recovers.
func TestReaderCacheSurvivesChurn(t *testing.T) {
	f := func(perScrape, maxSeries, reads int) {
		t.Helper()
		r := exposition{engine.NewReader(engine.VLLM, engine.Prefill, engine.KVAuto)}
		r.MaxSeries = maxSeries
		failed := 0
		for k := range reads {
			_, _, err := r.Read(churned(k, perScrape), "text/plain", time.Now())
			if err != nil {
				failed++
				if k >= reads-10 {
					t.Fatalf("%d new series per scrape, limit %d: read %d failed: %v", perScrape, maxSeries, k, err)
				}
			}
		}
		t.Logf("%d new series per scrape, limit %d: %d of %d reads failed", perScrape, maxSeries, failed, reads)
	}
	f(150, 1000, 60)      // four scrapes' worth fits: no read fails
	f(1500, 2000, 60)     // a scrape's worth fits, four do not: the cache must not jam
	f(15000, 200_000, 25) // the scale that jammed: 200,000 reached in 14 reads
}

// An exposition that alone exceeds the reader's series limit fails with
// its own reason. Only series of families ptdmon reads count: ignored ones
// are skipped before they take any memory.
func TestReaderSeriesLimitReason(t *testing.T) {
	r := exposition{engine.NewReader(engine.VLLM, engine.Prefill, engine.KVAuto)}
	r.MaxSeries = 100
	var b strings.Builder
	b.WriteString("# TYPE vllm:num_requests_running gauge\n")
	for i := range 500 {
		fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"%d\",model_name=\"m\"} 1\n", i)
	}
	_, _, err := r.Read([]byte(b.String()), "text/plain", time.Now())
	if got := ReadFailureReason(err); got != scrape.ReasonSeriesLimit {
		t.Errorf("reason %q (%v), want %s", got, err, scrape.ReasonSeriesLimit)
	}
}
