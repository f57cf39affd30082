package diagnose_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/trtllm/iterstats"
)

// run is one scenario driven through the whole read path in simulated time:
// the model renders each instance's exposition at its scrape instant, the
// engine adapter (or the TensorRT-LLM iteration-stats reader) reads it, the
// ledger records it and ticks every second, and the verdict is computed
// from the ledger's points. No clock, no sockets: minutes of traffic take
// milliseconds.
type run struct {
	sc        sim.Scenario
	seed      int64
	iterStats bool             // TensorRT-LLM targets read JSON iteration stats
	noKV      map[string]bool  // groups whose KV counters are not read (kv_source none)
	flaky     float64          // fraction of scrapes that fail
	duration  time.Duration    // simulated run
	warmUp    time.Duration    // checkpoints start here
	every     time.Duration    // between checkpoints
	check     func(checkpoint) // called at every checkpoint
	keep      *[]ledger.Point  // when set, receives the ledger's points at the end
	// pools, when set, groups the verdict by pool (the ledger's PoolOf)
	// with these pools' own B_request, as the API does.
	pools map[string]kvsize.Request
	// model, when set, receives the model at the end (its truth).
	model **sim.Model
	// tick, when set, receives every point the ledger's tick returns,
	// with the targets' metadata at that tick.
	tick func(p ledger.Point, meta map[string]ledger.TargetMeta)
}

// poolRun runs sc without checkpoints for d of simulated time, its model
// one pool with the scenario's B_request, and returns the ledger's points,
// the model (its truth) and the pool's name.
func poolRun(t *testing.T, sc sim.Scenario, seed int64, d time.Duration) ([]ledger.Point, *sim.Model, string) {
	t.Helper()
	return judgedPoolRun(t, sc, seed, d, 0, 0, nil)
}

// judgedPoolRun is poolRun with checkpoints every every from warmUp on:
// judge says what is wrong with the pool's verdict at each ("" when
// nothing is), and the test fails on anything wrong, or on no checkpoint.
// A nil judge takes no checkpoints.
func judgedPoolRun(t *testing.T, sc sim.Scenario, seed int64, d, warmUp, every time.Duration,
	judge func(at time.Duration, gv diagnose.GroupVerdict) string) ([]ledger.Point, *sim.Model, string) {
	t.Helper()
	var pts []ledger.Point
	var model *sim.Model
	pool := sc.Model
	r := run{sc: sc, seed: seed, duration: d, warmUp: warmUp, every: every, keep: &pts, model: &model,
		pools: map[string]kvsize.Request{pool: {Bytes: sc.KVBytesPerRequest}}}
	var wrong []string
	checks := 0
	if judge != nil {
		r.check = func(cp checkpoint) {
			checks++
			gv, err := groupVerdict(cp.verdict, pool)
			if err != nil {
				wrong = append(wrong, err.Error())
				return
			}
			if w := judge(cp.at, gv); w != "" {
				wrong = append(wrong, w)
			}
		}
	}
	if err := r.do(); err != nil {
		t.Fatal(err)
	}
	if judge != nil && (checks == 0 || len(wrong) > 0) {
		t.Errorf("%d of %d checkpoints wrong:\n%s", len(wrong), checks, strings.Join(wrong, "\n"))
	}
	return pts, model, pool
}

type checkpoint struct {
	at      time.Duration
	verdict diagnose.Verdict
	truth   sim.Load
}

var epoch = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

type scrapeTarget struct {
	info   sim.InstanceInfo
	group  string
	offset time.Duration
	prom   *engine.Reader
	iter   *iterstats.Reader
}

func (r run) do() error {
	m, err := sim.NewModel(r.sc, r.seed, epoch)
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	led := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second,
		KVRequest: kvsize.Request{Bytes: r.sc.KVBytesPerRequest}, Logger: quiet, PoolRequests: r.pools})
	var targets []*scrapeTarget
	var infos []engine.Target
	groupOf := map[string]string{}
	for _, g := range r.sc.Groups {
		for _, n := range (sim.Scenario{Groups: []sim.Group{g}}).InstanceNames() {
			groupOf[n] = g.Name
		}
	}
	for _, in := range m.Instances() {
		h := fnv.New32a()
		h.Write([]byte(in.Name))
		st := &scrapeTarget{info: in, group: groupOf[in.Name], offset: time.Duration(h.Sum32()) % time.Second}
		role, eng := engine.Role(in.Role), engine.Engine(in.Engine)
		kv := engine.KVAuto
		if r.noKV[st.group] {
			kv = engine.KVNone
		}
		if in.Engine == string(engine.TensorRTLLM) && r.iterStats {
			st.iter = iterstats.NewReader(role, iterstats.Options{Name: in.Name, Logger: quiet})
		} else {
			st.prom = engine.NewReader(eng, role, kv)
		}
		targets = append(targets, st)
		info := engine.Target{Name: in.Name, Role: role, Engine: eng}
		if r.pools == nil {
			// Without pools of their own, each engine's instances are a
			// pool named by the engine, which groupVerdict looks up.
			info.Labels = map[string]string{ledger.LabelPool: string(eng)}
		}
		infos = append(infos, info)
	}
	led.SetTargets(infos)
	rng := rand.New(rand.NewPCG(uint64(r.seed), 77))
	cfg := diagnose.Config{}
	var buf []byte
	for sec := time.Duration(0); sec < r.duration; sec += time.Second {
		// Scrapes in time order within the second, as the collector spreads them.
		for _, st := range sortedByOffset(targets) {
			at := sec + st.offset
			m.AdvanceTo(at)
			wall := epoch.Add(at)
			s := ledger.Scrape{Target: st.info.Name, Time: wall, Duration: 2 * time.Millisecond, Direct: true}
			// Half of the flaky scrapes time out; the other half return a
			// body cut short with garbage at the end, which the reader must
			// reject whole.
			fault := r.flaky > 0 && rng.Float64() < r.flaky
			if fault && rng.Float64() < 0.5 {
				s.Err, s.Reason = errors.New("context deadline exceeded"), "timeout"
				led.Record(s)
				continue
			}
			if st.iter != nil {
				buf, err = m.IterationStats(st.info.Name, buf[:0])
				if err == nil && fault {
					buf = append(buf[:len(buf)*3/5], "{broken"...)
				}
				if err == nil {
					s.Obs, s.Time, err = st.iter.Read(buf, wall)
				}
			} else {
				var f sim.Format
				buf, f, err = m.Exposition(st.info.Name, buf[:0])
				if err == nil && fault {
					buf = append(buf[:len(buf)*3/5], "{broken=\"\n"...)
				}
				if err == nil {
					s.Obs, err = st.prom.Read(buf, f.ContentType())
				}
			}
			if err != nil {
				s.Obs, s.Err, s.Reason = nil, err, "refused"
			}
			led.Record(s)
		}
		now := sec + time.Second
		m.AdvanceTo(now)
		p := led.Tick(epoch.Add(now))
		if r.tick != nil {
			r.tick(p, led.Meta())
		}
		if r.check != nil && now >= r.warmUp && (now-r.warmUp)%r.every == 0 {
			pts := led.Since(epoch.Add(now - cfg.Lookback(time.Second)))
			r.check(checkpoint{at: now, verdict: diagnose.Diagnose(pts, cfg), truth: m.TruthAt(now).Load})
		}
	}
	if r.keep != nil {
		*r.keep = led.Since(time.Time{})
	}
	if r.model != nil {
		*r.model = m
	}
	return nil
}

func sortedByOffset(ts []*scrapeTarget) []*scrapeTarget {
	out := append([]*scrapeTarget(nil), ts...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].offset < out[j-1].offset; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// groupVerdict finds the verdict of a simulated group: without pools of
// their own, the harness names each engine's instances a pool of that
// engine's name.
func groupVerdict(v diagnose.Verdict, eng string) (diagnose.GroupVerdict, error) {
	for _, g := range v.Groups {
		if g.Group == eng {
			return g, nil
		}
	}
	return diagnose.GroupVerdict{}, fmt.Errorf("no verdict for group %q in %+v", eng, v.Groups)
}
