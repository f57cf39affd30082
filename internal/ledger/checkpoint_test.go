package ledger

import (
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ptdmon/ptdmon/internal/ledger/point"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// ckptLedger is a ledger whose points go cold and into segments within a
// short test, as TestHistoryReadsWhatWasComputed's.
func ckptLedger(cfg Config) *Ledger {
	cfg.Interval = time.Second
	if cfg.Window == 0 {
		cfg.Window = 5 * time.Second
	}
	cfg.KVRequest = kvsize.Request{Bytes: 1 << 20}
	l := New(cfg)
	quickCold(l, 3, 7)
	l.SetTargets([]engine.Target{
		{Name: "p0", Role: engine.Prefill, Engine: engine.VLLM},
		{Name: "p1", Role: engine.Prefill},
		{Name: "d0", Role: engine.Decode, Engine: engine.VLLM},
		{Name: "d1", Role: engine.Decode},
		{Name: "x0"},
	})
	return l
}

// ckptInputs feeds l the inputs of second s: instances with and without
// KV, one in another zone, one that fails then goes stale, one that comes
// every other second.
func ckptInputs(l *Ledger, s int) time.Time { return ckptInputsOf(l, s, false) }

// ckptInputsOf is ckptInputs, with the decode instances' inter-token
// latency when steps is set.
func ckptInputsOf(l *Ledger, s int, steps bool) time.Time {
	east := time.FixedZone("UTC+5", 5*3600)
	now := at(float64(s))
	g := map[engine.Metric]float64{engine.Running: float64(s % 4), engine.KVUsage: 0.1 * float64(s%10)}
	// Decode's tokens, 20 ms apart: its step time.
	itl := func(o *engine.Observation) *engine.Observation {
		if !steps {
			return o
		}
		n := float64(10 * s)
		o.Histograms[engine.ITL.HistogramIndex()] = engine.Histogram{Present: true, HasSum: true, HasCount: true, Sum: 0.02 * n, Count: n,
			Buckets: []engine.Bucket{{UpperBound: 0.05, Count: n}, {UpperBound: math.Inf(1), Count: n}}}
		return o
	}
	l.Record(Scrape{Target: "p0", Time: now.Add(-time.Millisecond), Obs: obs(engine.Prefill, float64(3*s), float64(s<<20), g)})
	l.Record(Scrape{Target: "p1", Time: now.Add(-2 * time.Millisecond), Obs: obs(engine.Prefill, float64(s), math.NaN(), nil)})
	l.Record(Scrape{Target: "d0", Time: now.Add(-3 * time.Millisecond).In(east), Obs: itl(obs(engine.Decode, float64(2*s), float64(s<<19), g))})
	switch {
	case s < 30:
		l.Record(Scrape{Target: "d1", Time: now, Obs: itl(obs(engine.Decode, float64(s), 0, nil))})
	case s < 60:
		l.Record(Scrape{Target: "d1", Time: now, Err: errors.New("connection refused " + fmt.Sprint(s%3))})
	}
	if s%2 == 0 {
		l.Record(Scrape{Target: "x0", Time: now, Obs: itl(obs(engine.Decode, float64(s), math.NaN(), nil))})
	}
	return now
}

// samePoints says how two points differ as the API and the pools panel
// read them: their JSON (absent values' reasons, window times with their
// zones) and their pools.
func samePoints(a, b Point) string {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		return fmt.Sprintf("\n got %s\nwant %s", jb, ja)
	}
	ja, _ = json.Marshal(a.Pools)
	jb, _ = json.Marshal(b.Pools)
	if string(ja) != string(jb) {
		return fmt.Sprintf("pools\n got %s\nwant %s", jb, ja)
	}
	return ""
}

// checkpointed runs ticks seconds through a ledger that keeps checkpoints,
// taking them every tick as a recorder does, and returns the ledger and
// the pieces.
func checkpointed(t *testing.T, ticks int) (*Ledger, [][]byte) {
	return checkpointedOf(t, ticks, false)
}

// checkpointedOf is checkpointed, the decode instances with a step time
// when steps is set.
func checkpointedOf(t *testing.T, ticks int, steps bool) (*Ledger, [][]byte) {
	t.Helper()
	l := ckptLedger(Config{History: ticks})
	l.KeepCheckpoints()
	var pieces [][]byte
	for s := 0; s < ticks; s++ {
		l.Tick(ckptInputsOf(l, s, steps))
		ps, err := l.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, ps...)
	}
	return l, pieces
}

// A ledger restored from another's checkpoints holds the points the other
// computed, per-instance detail included, and stores the points computed
// after them only from after the last restored one.
func TestCheckpointRestoresThePoints(t *testing.T) {
	const ticks = 120
	live, pieces := checkpointed(t, ticks)
	want := live.Since(time.Time{})
	if len(pieces) < 2 {
		t.Fatalf("%d pieces, want several", len(pieces))
	}

	l := ckptLedger(Config{History: ticks})
	n, last, err := l.Restore(pieces, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Every point but the hot ones and the blocks waiting for their segment.
	if n < ticks-3-7 || n > ticks-3 {
		t.Fatalf("restored %d points of %d", n, ticks)
	}
	if !last.Equal(want[n-1].Time) {
		t.Errorf("last restored point at %v, want %v", last, want[n-1].Time)
	}
	got := l.Since(time.Time{})
	if len(got) != n {
		t.Fatalf("history holds %d points after restoring %d", len(got), n)
	}
	detail := 0
	for i := range got {
		if d := samePoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d: %s", i, d)
		}
		detail += len(got[i].Instances)
	}
	if detail < 4*n {
		t.Errorf("restored points hold %d instance-points, want at least %d", detail, 4*n)
	}

	// The inputs replayed from before the last restored point: the points
	// up to it are not stored twice, the later ones are the live ones. (The
	// replay starts before d1's last read: which stages an instance counts
	// in is learned from its reads.)
	for s := 20; s < ticks; s++ {
		l.Tick(ckptInputs(l, s))
	}
	got = l.Since(time.Time{})
	if len(got) != ticks {
		t.Fatalf("after the replayed tail the history holds %d points, want %d", len(got), ticks)
	}
	for i := range got {
		if d := samePoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d after the tail: %s", i, d)
		}
	}

	// The restored points are not handed out again; the tail's are.
	l.KeepCheckpoints()
	more, err := l.Checkpoint()
	if err != nil || len(more) != 0 {
		t.Errorf("a fresh KeepCheckpoints hands out %d pieces (%v), want none", len(more), err)
	}
}

// A ledger keeping fewer points restores only the newest pieces' points.
func TestCheckpointRestoresWhatTheHistoryKeeps(t *testing.T) {
	live, pieces := checkpointed(t, 120)
	all := live.Since(time.Time{})
	l := ckptLedger(Config{History: 20})
	n, last, err := l.Restore(pieces, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	got := l.Since(time.Time{})
	if len(got) != 20 || n != 20 {
		t.Fatalf("history holds %d points, restored %d; want 20", len(got), n)
	}
	k := 0
	for k < len(all) && !all[k].Time.Equal(last) {
		k++
	}
	want := all[k-19 : k+1]
	for i := range got {
		if d := samePoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d: %s", i, d)
		}
	}
}

// Points older than the span asked for are not restored.
func TestCheckpointRestoresFrom(t *testing.T) {
	live, pieces := checkpointed(t, 120)
	all := live.Since(time.Time{})
	l := ckptLedger(Config{History: 120})
	n, _, err := l.Restore(pieces, all[70].Time)
	if err != nil {
		t.Fatal(err)
	}
	got := l.Since(time.Time{})
	if len(got) != n || n == 0 || !got[0].Time.Equal(all[70].Time) {
		t.Fatalf("restored %d points from %v, want them from %v", n, got[0].Time, all[70].Time)
	}
	if n, _, err := ckptLedger(Config{History: 120}).Restore(pieces, all[119].Time); err != nil || n != 0 {
		t.Errorf("restore from after the last piece: %d points (%v), want none", n, err)
	}
}

// Pieces of a ledger configured otherwise, or damaged ones, are refused
// without a panic; the pieces before a damaged one stay restored.
func TestCheckpointRefusesWhatItCannotTrust(t *testing.T) {
	live, pieces := checkpointed(t, 120)
	want := live.Since(time.Time{})

	other := ckptLedger(Config{History: 120, Window: 10 * time.Second})
	if n, _, err := other.Restore(pieces, time.Time{}); !errors.Is(err, ErrCheckpointMismatch) || n != 0 {
		t.Errorf("restore into a ledger with another W: %d points, %v; want none and a mismatch", n, err)
	}
	if len(other.Since(time.Time{})) != 0 {
		t.Error("a refused restore left points")
	}

	f := func(name string, damage func([]byte) []byte) {
		t.Run(name, func(t *testing.T) {
			bad := append([][]byte(nil), pieces...)
			k := len(bad) / 2
			bad[k] = damage(append([]byte(nil), bad[k]...))
			l := ckptLedger(Config{History: 120})
			n, _, err := l.Restore(bad, time.Time{})
			if err == nil {
				t.Fatal("a damaged piece restored without an error")
			}
			before := 0
			for _, b := range pieces[:k] {
				h, _, _ := ParseCheckpointHeader(b)
				before += h.Points
			}
			if n != before {
				t.Errorf("restored %d points, want the %d before the damaged piece", n, before)
			}
			got := l.Since(time.Time{})
			for i := range got {
				if d := samePoints(want[i], got[i]); d != "" {
					t.Fatalf("point %d: %s", i, d)
				}
			}
		})
	}
	f("cut short", func(b []byte) []byte { return b[:len(b)*2/3] })
	f("garbage", func(b []byte) []byte {
		for i := 20; i < len(b); i += 7 {
			b[i] ^= 0xa5
		}
		return b
	})

	// A build whose pieces are laid out otherwise restores none of them.
	newer := append([][]byte(nil), pieces...)
	last := len(newer) - 1
	newer[last] = append([]byte(nil), newer[last]...)
	newer[last][4]++
	l := ckptLedger(Config{History: 120})
	if n, _, err := l.Restore(newer, time.Time{}); !errors.Is(err, ErrCheckpointMismatch) || n != 0 {
		t.Errorf("restore of another version's piece: %d points, %v; want none and a mismatch", n, err)
	}
}

// Pieces a recording kept before the history had a package of its own
// (testdata/checkpoint-v1.pieces.gz: checkpointed(t, 40)'s, each after its
// length as a uvarint) restore to the points computed now from the same
// inputs: the layout of a piece and the names of its fields hold.
// readPieces reads the checkpoint pieces of a testdata file: each after its
// length as a uvarint, gzip-compressed.
func readPieces(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	var pieces [][]byte
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			t.Fatalf("%s is cut short", name)
		}
		pieces, b = append(pieces, b[k:k+int(n)]), b[k+int(n):]
	}
	return pieces
}

// Version-2 pieces kept no decode step time: restored, it is absent and
// says why; everything else is as computed now.
func TestCheckpointRestoresVersion2Pieces(t *testing.T) {
	want, got, n := restoreEarlier(t, "testdata/checkpoint-v2.pieces.gz", true)
	steps := 0
	for i := range got {
		decodes := []*StagePoint{&got[i].Decode}
		wants := []*StagePoint{&want[i].Decode}
		for k := range got[i].Pools {
			decodes = append(decodes, &got[i].Pools[k].Decode)
			wants = append(wants, &want[i].Pools[k].Decode)
		}
		for k, d := range decodes {
			if d.Batch == nil || wants[k].Batch == nil {
				t.Fatalf("point %d: no decode batch", i)
			}
			if i >= n {
				continue
			}
			if d.Batch.Step.OK() || !strings.Contains(d.Batch.Step.Why, "not kept by the version") {
				t.Fatalf("point %d: step %+v from a version-2 piece", i, d.Batch.Step)
			}
			if wants[k].Batch.Step.OK() {
				steps++
			}
			wants[k].Batch.Step = d.Batch.Step
		}
		if i < n {
			withoutRouterParts(t, &want[i], &got[i])
		}
		if d := samePoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d: %s", i, d)
		}
	}
	if steps < n/2 {
		t.Errorf("the live points had a step time in %d restored decode stages, want at least %d", steps, n/2)
	}
}

// Version-3 pieces kept no router phases and no migrations: restored,
// they are absent and say why; everything else is as computed now.
func TestCheckpointRestoresVersion3Pieces(t *testing.T) {
	want, got, n := restoreEarlier(t, "testdata/checkpoint-v3.pieces.gz", true)
	for i := range got {
		if i < n {
			withoutRouterParts(t, &want[i], &got[i])
		}
		if d := samePoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d: %s", i, d)
		}
	}
}

// withoutRouterParts requires got's router phases and migrations, which
// pieces before version 4 lack, absent for that reason, and gives want
// the same.
func withoutRouterParts(t *testing.T, want, got *Point) {
	t.Helper()
	for k := range got.Pools {
		ph, f := &got.Pools[k].Phases, &got.Pools[k].Failures
		for _, n := range []Num{ph.Router, ph.Handover, ph.PrefillLeg, f.Migrated.PerSecond, f.Migrated.Ratio} {
			if n.OK() || !strings.Contains(n.Why, "not kept by the version") {
				t.Fatalf("pool %d: a router phase or migration %+v restored from an earlier piece", k, n)
			}
		}
		if k < len(want.Pools) {
			w, wf := &want.Pools[k].Phases, &want.Pools[k].Failures
			w.Router, w.Handover, w.PrefillLeg, wf.Migrated = ph.Router, ph.Handover, ph.PrefillLeg, f.Migrated
		}
	}
}

// restoreEarlier restores the pieces of an earlier version in file, the
// inputs of checkpointedOf(t, 40, steps), and returns the points computed
// now from those inputs, the points restored and then computed, and how
// many were restored.
func restoreEarlier(t *testing.T, file string, steps bool) (want, got []Point, n int) {
	t.Helper()
	pieces := readPieces(t, file)
	live, _ := checkpointedOf(t, 40, steps)
	want = live.Since(time.Time{})
	l := ckptLedger(Config{History: 40})
	n, _, err := l.Restore(pieces, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	// Every point but the hot ones and the blocks waiting for their segment.
	if n < 40-3-7 || n > 40-3 {
		t.Fatalf("restored %d points of 40", n)
	}
	return want, l.Since(time.Time{}), n
}

func TestCheckpointRestoresEarlierPieces(t *testing.T) {
	want, got, n := restoreEarlier(t, "testdata/checkpoint-v1.pieces.gz", false)
	detail := 0
	for i := range got {
		// Version 1 kept no stage work, no untimed share and a leg's TTFT:
		// restored, they are absent and say why; the rest is as computed
		// now.
		if i < n {
			if b := got[i].Decode.Busy; b.OK() || !strings.Contains(b.Why, "not kept by the version") {
				t.Fatalf("point %d: decode busy %+v from a version-1 piece", i, b)
			}
			withoutWork(&want[i])
			withoutWork(&got[i])
		}
		for k := range got[i].Pools {
			ph := &got[i].Pools[k].Phases
			if i < n && (ph.Untimed.OK() || ph.Untimed.Why != point.WhyOlder) {
				t.Fatalf("point %d pool %d: untimed %+v, want absent: %s", i, k, ph.Untimed, point.WhyOlder)
			}
			if i < n && k < len(want[i].Pools) {
				w := &want[i].Pools[k].Phases
				w.TTFT, w.TTFTSource, w.Untimed = ph.TTFT, ph.TTFTSource, ph.Untimed
			}
		}
		// The values a v1 piece lacks are absent for that reason, never 0;
		// the rest is as computed now.
		for _, n := range unkept(&got[i]) {
			if n.OK() || !strings.Contains(n.Why, "earlier version") {
				t.Fatalf("point %d: a value the piece does not keep restored as %+v", i, n)
			}
		}
		if len(unkept(&got[i])) == 0 {
			t.Fatalf("point %d: no value marked as not kept", i)
		}
		sameUnkept(&want[i], &got[i])
		if i < n {
			withoutRouterParts(t, &want[i], &got[i])
		}
		if d := samePoints(want[i], got[i]); d != "" {
			t.Fatalf("point %d: %s", i, d)
		}
		detail += len(got[i].Instances)
	}
	if detail < 4*n {
		t.Errorf("restored points hold %d instance-points, want at least %d", detail, 4*n)
	}
}

// withoutWork blanks the stages' work, which version-1 pieces lack.
func withoutWork(p *Point) {
	for _, s := range []*StagePoint{&p.Prefill, &p.Decode} {
		s.Busy, s.BusyBasis, s.Batch = Num{}, "", nil
	}
	p.KV.LinkBusy, p.KV.LinkBytes, p.KV.Links = Num{}, Num{}, 0
	for i := range p.Pools {
		pp := &p.Pools[i]
		for _, s := range []*StagePoint{&pp.Prefill, &pp.Decode} {
			s.Busy, s.BusyBasis, s.Batch = Num{}, "", nil
		}
		pp.KV.LinkBusy, pp.KV.LinkBytes, pp.KV.Links = Num{}, Num{}, 0
	}
}

// unkept returns the values of p that pieces of the v1 layout lack (load
// shed before the engine, waiting by reason).
func unkept(p *Point) []*Num {
	out := []*Num{&p.Router.Shed, &p.Prefill.WaitingBy.Capacity, &p.Prefill.WaitingBy.Deferred, &p.Decode.WaitingBy.Capacity, &p.Decode.WaitingBy.Deferred}
	for k := range p.Routers {
		out = append(out, &p.Routers[k].Shed)
	}
	for k := range p.Pools {
		pp := &p.Pools[k]
		out = append(out, &pp.Router.Shed, &pp.Failures.Shed.PerSecond, &pp.Failures.Shed.Ratio,
			&pp.Prefill.WaitingBy.Capacity, &pp.Prefill.WaitingBy.Deferred, &pp.Decode.WaitingBy.Capacity, &pp.Decode.WaitingBy.Deferred)
	}
	return out
}

// sameUnkept sets want's values that a v1 piece lacks to got's, to compare
// the rest.
func sameUnkept(want, got *Point) {
	w, g := unkept(want), unkept(got)
	for i := range min(len(w), len(g)) {
		*w[i] = *g[i]
	}
}
