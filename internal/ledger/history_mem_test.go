package ledger_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// liveFleet is a ledger fed as serve feeds it from n vLLM engines: every
// instance's observation is read by the vLLM adapter from a real exposition
// (one API server with four DP engines and the FlagCX connector, 1,504
// series), then every second each counter series grows by a random whole
// amount, the gauges take random values and the scrape's time jitters by up
// to 20 ms, so rates, usage and window times carry a float's or a clock's
// full entropy, as they do live.
type liveFleet struct {
	l     *ledger.Ledger
	names []string
	obs   []*engine.Observation
	rng   *rand.Rand
	sec   int
}

func newLiveFleet(t testing.TB, n int) *liveFleet {
	body, err := os.ReadFile("../engine/testdata/vllm_dp4_1504.txt")
	if err != nil {
		t.Fatal(err)
	}
	f := &liveFleet{
		l:   ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, KVRequest: kvsize.Request{Bytes: 1 << 30}}),
		rng: rand.New(rand.NewSource(1)),
	}
	var infos []engine.Target
	for i := 0; i < n; i++ {
		role, name := engine.Prefill, fmt.Sprintf("p%d", i)
		if i%2 == 1 {
			role, name = engine.Decode, fmt.Sprintf("d%d", i)
		}
		o, err := engine.NewReader(engine.VLLM, role, engine.KVAuto).Read(body, "")
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, engine.Target{Name: name, Role: role, Engine: engine.VLLM})
		f.names = append(f.names, name)
		f.obs = append(f.obs, o)
	}
	f.l.SetTargets(infos)
	return f
}

// step records one scrape of every instance and ticks.
func (f *liveFleet) step() {
	now := benchStart.Add(time.Duration(f.sec) * time.Second)
	for i, o := range f.obs {
		for c := range o.Counters {
			grow := float64(f.rng.Intn(4))
			switch o.Counters[c].Metric {
			case engine.KVBytes:
				grow *= float64(f.rng.Intn(1<<30) + 1)
			case engine.PromptTokens:
				grow *= float64(f.rng.Intn(4000) + 1)
			case engine.GenerationTokens:
				grow *= float64(f.rng.Intn(400) + 1)
			}
			o.Counters[c].Value += grow
		}
		for g := range o.Gauges {
			if o.HasGauges[g] {
				o.Gauges[g] = float64(f.rng.Intn(64))
			}
		}
		o.Gauges[engine.KVUsage.GaugeIndex()] = f.rng.Float64()
		jitter := time.Duration(f.rng.Int63n(int64(20 * time.Millisecond)))
		f.l.Record(ledger.Scrape{Target: f.names[i], Time: now.Add(-300*time.Millisecond + jitter), Obs: o})
	}
	f.sec++
	f.l.Tick(now)
}

// TestHistoryHourCurve is a measurement, not a check: it feeds 200 vLLM
// instances for an hour and a quarter of simulated seconds, as fast as the
// ledger takes them, and logs the live heap, the heap the runtime holds and
// the resident memory every five simulated minutes. Run it with
// PTDMON_HOUR_CURVE=1 (docs/performance.md).
func TestHistoryHourCurve(t *testing.T) {
	if os.Getenv("PTDMON_HOUR_CURVE") == "" {
		t.Skip("a measurement: set PTDMON_HOUR_CURVE=1")
	}
	f := newLiveFleet(t, 200)
	var m runtime.MemStats
	t.Logf("%8s %10s %10s %10s %10s", "minute", "live MiB", "heap MiB", "RSS MiB", "HWM MiB")
	for min := 1; min <= 75; min++ {
		for i := 0; i < 60; i++ {
			f.step()
		}
		if min%5 != 0 && min != 1 && min != 2 {
			continue
		}
		runtime.ReadMemStats(&m)
		heap := m.HeapInuse
		runtime.GC()
		runtime.ReadMemStats(&m)
		t.Logf("%8d %10d %10d %10d %10d", min, m.HeapAlloc>>20, heap>>20, procKiB(t, "VmRSS")>>10, procKiB(t, "VmHWM")>>10)
	}
	runtime.KeepAlive(f)
}

// procKiB reads a figure in kB from /proc/self/status (Linux).
func procKiB(t *testing.T, field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status: ", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			var kib uint64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kib)
			return kib
		}
	}
	return 0
}
