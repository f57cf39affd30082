package service

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// trtIterEngine serves TensorRT-LLM's JSON iteration statistics: a queue of
// records, one every 50 ms, each completing 1 request; GET drains it.
type trtIterEngine struct {
	mu    sync.Mutex
	queue []string
	iter  int
	stop  chan struct{}
}

func (e *trtIterEngine) produce() {
	tk := time.NewTicker(50 * time.Millisecond)
	defer tk.Stop()
	for {
		select {
		case <-e.stop:
			return
		case now := <-tk.C:
			e.mu.Lock()
			e.iter++
			e.queue = append(e.queue, fmt.Sprintf(`{"timestamp":%q,"iter":%d,"iterLatencyMS":20.0,"numActiveRequests":30,"numQueuedRequests":2,"numCompletedRequests":1,"numNewActiveRequests":1,"schedulerMode":"non_overlap","statsSequence":%d,"statsDroppedFrames":0,"rank":0,"attentionDpRank":0,"kvCacheStats":{"maxNumBlocks":1000,"freeNumBlocks":750,"usedNumBlocks":250,"tokensPerBlock":32,"allocTotalBlocks":%d,"allocNewBlocks":%d,"reusedBlocks":0,"missedBlocks":%d,"cacheHitRate":0.0}}`,
				now.Local().Format("01-02-2006 15:04:05.000000"), e.iter, e.iter, e.iter*10, e.iter*10, e.iter*10))
			e.mu.Unlock()
		}
	}
}

func (e *trtIterEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	body := "[" + strings.Join(e.queue, ",") + "]"
	e.queue = e.queue[:0]
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, body)
}

// TestIterationStatsTarget: a decode worker read through its JSON iteration
// statistics completes 20 requests/s (one per 50 ms record), in fake time.
func TestIterationStatsTarget(t *testing.T) {
	synctest.Test(t, testIterationStatsTarget)
}

func testIterationStatsTarget(t *testing.T) {
	e := &trtIterEngine{stop: make(chan struct{})}
	go e.produce()
	defer close(e.stop)
	n := newMemNet()
	url := n.add("gen0:8000", e)
	cfg := &config.Config{
		Interval: config.Duration{Duration: 500 * time.Millisecond},
		Window:   config.Duration{Duration: 4 * time.Second},
		Targets:  []config.Target{{Name: "gen0", URL: url, Role: "decode", Engine: "trtllm", IterationStats: true}},
	}
	rs := startBubble(t, cfg, kvsize.Request{}, n)
	time.Sleep(6 * time.Second)
	synctest.Wait()
	var snap struct {
		Point   pointJSON    `json:"point"`
		Targets []targetJSON `json:"targets"`
	}
	rs.getJSON(t, "/api/v1/snapshot", &snap)
	// Records are exactly 50 ms apart in fake time and carry their time
	// to the microsecond.
	within(t, "decode req/s from iteration stats", snap.Point.Decode.Window, 20, 1e-6)
	if len(snap.Targets) != 1 || !snap.Targets[0].Up {
		t.Errorf("targets: %+v", snap.Targets)
	}
	metrics := rs.getText(t, "/metrics")
	// Non-overlap mode: one iteration is one loop, 20 ms.
	for _, want := range []string{`ptd_iteration_loop_seconds{engine="trtllm",model="",role="decode",target="gen0"} 0.02`,
		`ptd_iteration_latency_seconds{engine="trtllm",model="",role="decode",scheduler_mode="non_overlap",target="gen0"} 0.02`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
