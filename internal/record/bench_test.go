package record

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/prometheus/tsdb"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// vllmObservation is what the vLLM adapter reads from one simulated
// prefill engine: the canonical values one scrape records.
func vllmObservation(b *testing.B) *engine.Observation {
	return simObservation(b, "vllm-p0", engine.Prefill)
}

func vllmDecodeObservation(b *testing.B) *engine.Observation {
	return simObservation(b, "vllm-d0", engine.Decode)
}

// simObservation is what the vLLM adapter reads from one instance of the
// balanced scenario 30 s in.
func simObservation(b *testing.B, instance string, role engine.Role) *engine.Observation {
	return &simObservations(b, instance, role, 1)[0]
}

// simObservations are the reads of one instance of the balanced scenario
// at 30 s and each second after, n of them.
func simObservations(b *testing.B, instance string, role engine.Role, n int) []engine.Observation {
	b.Helper()
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		b.Fatal(err)
	}
	m, err := sim.NewModel(sc, 1, epoch)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]engine.Observation, n)
	r := engine.NewReader("vllm", role, engine.KVAuto)
	for k := range out {
		m.AdvanceTo(time.Duration(30+k) * time.Second)
		body, f, err := m.Exposition(instance, nil)
		if err != nil {
			b.Fatal(err)
		}
		obs, err := r.Read(body, f.ContentType())
		if err != nil {
			b.Fatal(err)
		}
		copyObs(&out[k], obs)
	}
	return out
}

func samplesOf(o *engine.Observation) int {
	n := 5 + len(o.Counters) // the marker, order, duration, bytes, samples
	for _, ok := range o.HasGauges {
		if ok {
			n++
		}
	}
	for _, h := range o.Histograms {
		if h.Present && len(h.Buckets) > 0 {
			n += len(h.Buckets) + 2
		}
	}
	return n
}

// BenchmarkAppendScrape appends one scrape's canonical samples of a vLLM
// engine, committing once per 200 scrapes (a tick of 200 targets). Bytes
// are the samples' timestamp and value, 16 each.
func BenchmarkAppendScrape(b *testing.B) {
	o := vllmObservation(b)
	db := openBenchDB(b)
	w := newAppender(db, 5*time.Second)
	n := samplesOf(o)
	b.SetBytes(int64(16 * n))
	targets := make([]string, 200)
	for i := range targets {
		targets[i] = "vllm-" + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + string(rune('0'+i/676))
	}
	e := event{ok: true, obs: *o, scrape: ledger.Scrape{Duration: time.Millisecond, Bytes: 60_000, Samples: 1504}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.scrape.Target = targets[i%len(targets)]
		e.scrape.Time = epoch.Add(time.Duration(i/len(targets)) * time.Second)
		if err := w.scrape(&e); err != nil {
			b.Fatal(err)
		}
		if i%len(targets) == len(targets)-1 {
			if err := w.commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n), "samples/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sample")
}

// BenchmarkRecordedRun records a simulated run of 10 minutes, cuts its
// block, and reports the bytes per recorded sample on disk and the time a
// resume of it takes.
func BenchmarkRecordedRun(b *testing.B) {
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		live := liveRunWith(b, dir, "balanced", 600, (*Recorder).Close)
		size, samples := blockStats(b, dir)
		b.ReportMetric(float64(size)/float64(samples), "bytes/sample")
		b.ReportMetric(float64(samples)/float64(len(live)), "samples/tick")

		rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
		if err != nil {
			b.Fatal(err)
		}
		l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 3600, Tap: rec})
		start := time.Now()
		n, err := rec.Resume(l)
		took := time.Since(start)
		rec.Close()
		if err != nil || n != len(live) {
			b.Fatalf("resumed %d of %d points: %v", n, len(live), err)
		}
		b.ReportMetric(took.Seconds(), "resume-s")
	}
}

// blockStats sums the blocks' chunk and index bytes and their samples,
// from each block's meta.json.
func blockStats(b *testing.B, dir string) (size, samples int64) {
	metas, err := filepath.Glob(filepath.Join(dir, "*", "meta.json"))
	if err != nil || len(metas) == 0 {
		b.Fatalf("no block in %s: %v", dir, err)
	}
	for _, path := range metas {
		raw, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var m struct {
			Stats struct {
				NumSamples int64 `json:"numSamples"`
			} `json:"stats"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
		samples += m.Stats.NumSamples
		_ = filepath.Walk(filepath.Dir(path), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				size += fi.Size()
			}
			return nil
		})
	}
	return size, samples
}

func openBenchDB(b *testing.B) *tsdb.DB {
	db, err := tsdb.Open(b.TempDir(), nil, nil, tsdbOptions(Options{}), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// fleetRun records ticks seconds of n vLLM engines (half prefill, half
// decode) through a ledger and the real recorder into dir, as serve
// does: each engine's canonical values as the adapter reads them from the
// simulator, its counters and histograms advancing every second. It
// returns the samples recorded.
func fleetRun(b *testing.B, dir string, n, ticks int) int {
	b.Helper()
	obs := [2]*engine.Observation{vllmObservation(b), vllmDecodeObservation(b)}
	rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Version: "bench", Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
	if err != nil {
		b.Fatal(err)
	}
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 3600, Tap: rec})
	if _, err := rec.Resume(l); err != nil {
		b.Fatal(err)
	}
	targets := make([]engine.Target, n)
	for i := range targets {
		targets[i] = engine.Target{Name: fmt.Sprintf("vllm-%03d", i), Role: obs[i%2].Role, Engine: engine.VLLM}
	}
	l.SetTargets(targets)
	var o engine.Observation
	samples := 0
	for s := 1; s <= ticks; s++ {
		at := epoch.Add(time.Duration(s) * time.Second)
		for i, tg := range targets {
			src := obs[i%2]
			copyObs(&o, src)
			for j := range o.Counters {
				o.Counters[j].Value += float64(s * (1 + j%5))
			}
			for j := range o.Histograms {
				h := &o.Histograms[j]
				for k := range h.Buckets {
					h.Buckets[k].Count += float64(s * (k + 1))
				}
				h.Count += float64(s * (len(h.Buckets) + 1))
				h.Sum += float64(s) * 0.37
			}
			samples += samplesOf(&o)
			l.Record(ledger.Scrape{Target: tg.Name, Time: at.Add(-time.Duration(300+i) * time.Millisecond), Duration: 3 * time.Millisecond, Bytes: 60_000, Samples: 1504, Obs: &o})
		}
		l.Tick(at)
		// The recorder's queue drops what does not fit; a benchmark
		// must record everything.
		for len(rec.ch) > 4*n {
			time.Sleep(time.Millisecond)
		}
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	if _, dropped := rec.Status(); dropped > 0 {
		b.Fatalf("%d inputs dropped", dropped)
	}
	return samples
}

// BenchmarkResumeFleet resumes a recording of 200 vLLM engines into a
// ledger configured as serve's (an hour of history). The recording is
// BENCH_RESUME_TICKS seconds long (default 300: writing it takes longer
// than resuming it). The points its checkpoint holds are restored and
// only the inputs after them (the hot tail and the segment not sealed
// yet, 96–160 s, with a warm-up) are recomputed: compare two lengths to
// see the cost not grow with the run's. Run with -benchtime 1x.
func BenchmarkResumeFleet(b *testing.B) {
	ticks := 300
	if v := os.Getenv("BENCH_RESUME_TICKS"); v != "" {
		if _, err := fmt.Sscan(v, &ticks); err != nil {
			b.Fatal(err)
		}
	}
	const fleet = 200
	dir := b.TempDir()
	samples := fleetRun(b, dir, fleet, ticks)
	ckpt := dirSize(filepath.Join(dir, CheckpointDir))
	b.ReportAllocs()
	b.ResetTimer()
	var took time.Duration
	for i := 0; i < b.N; i++ {
		rec, err := Create(Options{Dir: dir, Meta: Meta{DirectReads: true, Interval: Duration(time.Second), Window: Duration(5 * time.Second)}})
		if err != nil {
			b.Fatal(err)
		}
		l := ledger.New(ledger.Config{Interval: time.Second, Window: 5 * time.Second, History: 3600, Tap: rec})
		cpu0 := cpuTime()
		start := time.Now()
		n, err := rec.Resume(l)
		took = time.Since(start)
		cpu := cpuTime() - cpu0
		b.StopTimer()
		if err != nil || n != ticks {
			b.Fatalf("resumed %d of %d points: %v", n, ticks, err)
		}
		// Leave the recording as it was for the next round.
		rec.abandon()
		b.ReportMetric(cpu.Seconds(), "cpu-s")
		b.ReportMetric(float64(rec.restored), "restored-points")
		b.StartTimer()
	}
	b.ReportMetric(float64(samples), "samples")
	b.ReportMetric(float64(ckpt)/float64(ticks), "ckpt-B/tick")
	b.ReportMetric(took.Seconds(), "resume-s")
	b.ReportMetric(float64(took.Nanoseconds())/float64(samples), "ns/sample")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkAppendSuccessive appends the reads of 200 targets tick after
// tick, each target reading a vLLM engine of the balanced scenario a
// second later than at its previous read (counters and buckets move as a
// loaded engine's do), committing once a tick. A read of changes writes
// only what moved; ns/sample is per canonical value read.
func BenchmarkAppendSuccessive(b *testing.B) {
	const reads = 120
	obs := simObservations(b, "vllm-d0", engine.Decode, reads)
	n := 0
	for k := range obs {
		n += samplesOf(&obs[k])
	}
	n /= reads
	db := openBenchDB(b)
	w := newAppender(db, 5*time.Second)
	targets := make([]string, 200)
	for i := range targets {
		targets[i] = fmt.Sprintf("vllm-%03d", i)
	}
	b.SetBytes(int64(16 * n))
	b.ReportAllocs()
	b.ResetTimer()
	var e event
	for i := 0; i < b.N; i++ {
		tick, t := i/len(targets), i%len(targets)
		e = event{ok: true, obs: obs[(tick+t)%reads], scrape: ledger.Scrape{Target: targets[t], Duration: time.Millisecond, Bytes: 60_000, Samples: 1504,
			Time: epoch.Add(time.Duration(tick) * time.Second)}}
		if err := w.scrape(&e); err != nil {
			b.Fatal(err)
		}
		if t == len(targets)-1 {
			if err := w.commit(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sample")
}
