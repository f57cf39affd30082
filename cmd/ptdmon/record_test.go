package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/record"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// recordingPtdmon is ptdmon for the tests of a crash, which run it in its
// own process: this test binary, which TestMain makes ptdmon when asPtdmon
// is set.
func recordingPtdmon(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startRecordingServe runs `ptdmon serve -record dir` and returns its address.
func startRecordingServe(t *testing.T, bin, cfg, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "-config", cfg, "-record", dir, "-listen", "127.0.0.1:0", "-log-level", "warn")
	cmd.Env = append(os.Environ(), asPtdmon+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	buf := make([]byte, 256)
	n, err := stdout.Read(buf)
	if err != nil {
		t.Fatalf("serve printed nothing: %v", err)
	}
	m := regexp.MustCompile(`https?://([0-9.:]+)/`).FindSubmatch(buf[:n])
	if m == nil {
		t.Fatalf("no address in %q", buf[:n])
	}
	return cmd, string(m[1])
}

func recordedSeries(t *testing.T, addr string) []ledger.Point {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/series?since=0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Points []ledger.Point `json:"points"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Points
}

// kill -9 in the middle of a run, then serve again on the same directory:
// the history before the kill comes back, the gap is the downtime, and the
// first rates after it are no spike although the engines' counters kept
// growing meanwhile.
func TestKilledServeResumes(t *testing.T) {
	t.Parallel() // serve runs in a process of its own; nothing of this one is changed
	if testing.Short() {
		t.Skip("runs serve for over a minute")
	}
	bin := recordingPtdmon(t)
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cluster, err := sim.Start(ctx, sc, sim.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	var yaml strings.Builder
	fmt.Fprintf(&yaml, "interval: 500ms\nwindow: 2s\nkv_bytes_per_request: %d\ntargets:\n", cluster.BytesPerRequest())
	for _, tg := range cluster.Targets() {
		fmt.Fprintf(&yaml, "  - {name: %s, url: %q, role: %s, engine: %s}\n", tg.Name, tg.URL, tg.Role, tg.Engine)
	}
	cfg := filepath.Join(t.TempDir(), "ptdmon.yaml")
	if err := os.WriteFile(cfg, []byte(yaml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")

	first, addr := startRecordingServe(t, bin, cfg, dir)
	var before []ledger.Point
	// Until the ledger sealed its first points into the checkpoint: the
	// 70 s of points that keep their detail as computed, then a segment's
	// 64 points.
	ckpt := filepath.Join(dir, record.CheckpointDir, "00000001.ckpt")
	testutil.Eventually(t, 180*time.Second, 500*time.Millisecond, func() (bool, string) {
		before = recordedSeries(t, addr)
		st, err := os.Stat(ckpt)
		return err == nil && st.Size() > 0, fmt.Sprintf("%d points before the kill, no checkpoint yet", len(before))
	})
	before = recordedSeries(t, addr)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	killedAt := time.Now()
	time.Sleep(3 * time.Second) // the engines go on serving requests
	sealed := checkpointedUntil(t, ckpt)
	_, addr = startRecordingServe(t, bin, cfg, dir)
	restartedAt := time.Now()
	var after []ledger.Point
	testutil.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		after = recordedSeries(t, addr)
		return len(after) > 0 && after[len(after)-1].Time.After(restartedAt.Add(5*time.Second)), "5 s of points after the restart"
	})

	// The history: every point of the first process up to a few seconds
	// before the kill is there. The checkpointed ones are restored as
	// computed, not recomputed: equal to the last bit, per-instance detail
	// included. Those after them are recomputed from the recorded inputs;
	// internal/record's tests hold such points to the live ones.
	byTime := map[time.Time]ledger.Point{}
	for _, p := range after {
		byTime[p.Time.UTC()] = p
	}
	kept, restored := 0, 0
	for _, p := range before {
		q, ok := byTime[p.Time.UTC()]
		if !ok {
			continue
		}
		kept++
		if p.Time.After(sealed) {
			continue
		}
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(q)
		if string(a) != string(b) {
			t.Fatalf("checkpointed point at %v:\nbefore the kill %s\nafter the resume %s", p.Time, a, b)
		}
		restored++
	}
	if kept < len(before)-6 {
		t.Errorf("resume kept %d of the %d points seen before the kill", kept, len(before))
	}
	if restored < 64 {
		t.Errorf("%d checkpointed points came back, want a segment's 64", restored)
	}
	// The gap: no wider than the downtime and the restart.
	maxGap, steady := time.Duration(0), 0.0
	for i := 1; i < len(after); i++ {
		maxGap = max(maxGap, after[i].Time.Sub(after[i-1].Time))
	}
	downtime := restartedAt.Sub(killedAt)
	if maxGap > downtime+5*time.Second {
		t.Errorf("gap of %v in the history, downtime %v", maxGap, downtime)
	}
	// No spike: after the restart, the decode rate stays within the range
	// of the rates before the kill (the counters grew during the gap; a
	// rate over it is their mean, not their sum).
	for _, p := range before {
		if p.Decode.Instant.OK() {
			steady = max(steady, p.Decode.Instant.V)
		}
	}
	if steady == 0 {
		t.Fatal("no decode rate before the kill")
	}
	for _, p := range after {
		if p.Time.After(killedAt) && p.Decode.Instant.OK() && p.Decode.Instant.V > 2*steady {
			t.Errorf("decode %.1f req/s at %v after the resume, at most %.1f before the kill", p.Decode.Instant.V, p.Time, steady)
		}
	}
}

// checkpointedUntil is the time of the last point the checkpoint file's
// records hold.
func checkpointedUntil(t *testing.T, name string) time.Time {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	// Each record: its payload's length and CRC-32C, then the payload (docs/runs.md).
	for len(b) >= 8 {
		n := int(binary.LittleEndian.Uint32(b))
		if n > len(b)-8 {
			break
		}
		h, _, err := ledger.ParseCheckpointHeader(b[8 : 8+n])
		if err != nil {
			t.Fatal(err)
		}
		last = h.Last
		b = b[8+n:]
	}
	if last.IsZero() {
		t.Fatal("no whole record in the checkpoint")
	}
	return last
}

// recordingSimConfig starts a simulated cluster and writes a ptdmon.yaml for it.
func recordingSimConfig(t *testing.T, scenario string) string {
	t.Helper()
	sc, err := sim.LoadScenario(scenario)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cluster, err := sim.Start(ctx, sc, sim.Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cluster.Close() })
	var yaml strings.Builder
	fmt.Fprintf(&yaml, "interval: 250ms\nwindow: 1s\nkv_bytes_per_request: %d\ntargets:\n", cluster.BytesPerRequest())
	for _, tg := range cluster.Targets() {
		fmt.Fprintf(&yaml, "  - {name: %s, url: %q, role: %s, engine: %s}\n", tg.Name, tg.URL, tg.Role, tg.Engine)
	}
	cfg := filepath.Join(t.TempDir(), "ptdmon.yaml")
	if err := os.WriteFile(cfg, []byte(yaml.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ptdmon record runs the command, exits with its status, marks its start
// and end in the recording and says how to report on it.
func TestRecordWrapsACommand(t *testing.T) {
	t.Parallel() // its own simulator and directory, as TestRecordedBucketsCountTheCompletions
	cfg := recordingSimConfig(t, "balanced")
	dir := filepath.Join(t.TempDir(), "round1")
	var stdout, stderr strings.Builder
	code := dispatch([]string{"record", "-config", cfg, "-o", dir, "-settle", "500ms", "--",
		"sh", "-c", "echo generating load; sleep 2; exit 3"}, &stdout, &stderr)
	if code != 3 {
		t.Fatalf("exit %d, want the command's 3; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "generating load") {
		t.Errorf("the command's output is not passed on: %q", stdout.String())
	}
	if want := "ptdmon report " + dir; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
	run, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	m := run.Meta()
	if len(m.Annotations) != 2 || !strings.HasPrefix(m.Annotations[0].Text, "start: sh -c") || !strings.Contains(m.Annotations[1].Text, "exit status 3") {
		t.Fatalf("annotations = %+v", m.Annotations)
	}
	span := m.Annotations[1].Time.Sub(m.Annotations[0].Time)
	if span < 2*time.Second || span > 4*time.Second {
		t.Errorf("the command ran %v between its marks, it sleeps 2 s", span)
	}
	pts, err := run.Points(m.Annotations[0].Time, m.Annotations[1].Time)
	if err != nil {
		t.Fatal(err)
	}
	// 250 ms ticks over the command's 2 s and more.
	if len(pts) < 7 {
		t.Errorf("%d points while the command ran", len(pts))
	}
	// A target's model is noted at its first good read: on a loaded
	// machine one target's reads may all time out in the command's 2 s,
	// so the run's models are asked of the targets read.
	named := 0
	for _, tm := range m.Targets {
		if tm.Model != "" {
			named++
		}
	}
	if m.KVRequest.Bytes == 0 || m.ConfigHash == "" || len(m.Targets) == 0 || named == 0 || len(m.Models) != 1 {
		t.Errorf("meta lacks B_request, the hash or the targets' models: %+v", m)
	}

	f := func(args []string, want string) {
		t.Helper()
		var o, e strings.Builder
		if code := dispatch(append([]string{"record"}, args...), &o, &e); code != 2 || !strings.Contains(e.String(), want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", args, code, e.String(), want)
		}
	}
	f([]string{"-o", dir}, "missing the command")
	f([]string{"-config", cfg, "--", "true"}, "-o DIR is required")
}

// A recording that cannot be closed — its directory gone from under it
// while the command ran — fails the record command, whatever the
// command's own status: the run the user wanted is not on disk.
func TestRecordFailsWhenTheRecordingDoes(t *testing.T) {
	t.Parallel() // its own simulator and directory
	cfg := recordingSimConfig(t, "balanced")
	dir := filepath.Join(t.TempDir(), "round1")
	var stdout, stderr strings.Builder
	code := dispatch([]string{"record", "-config", cfg, "-o", dir, "-settle", "300ms", "--",
		"rm", "-rf", dir}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a failure at run time); stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "run.json") || strings.Contains(stderr.String(), "the recording is in") {
		t.Errorf("stderr does not say the recording failed:\n%s", stderr.String())
	}
}

// ptdmon replay serves the recorded points through the same API as serve:
// all at once, or paced at -speed.
func TestReplayServesTheRecording(t *testing.T) {
	cfg := recordingSimConfig(t, "kv-bound")
	dir := filepath.Join(t.TempDir(), "round1")
	recordRound(t, cfg, dir, "3")
	run, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := run.Points(time.Time{}, time.Time{})
	run.Close()
	if err != nil {
		t.Fatal(err)
	}

	replay := func(args ...string) (string, func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		old := serveContext
		serveContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
		var stdout, stderr syncBuffer
		done := make(chan int, 1)
		go func() { done <- runReplay(append([]string{dir, "-listen", "127.0.0.1:0"}, args...), &stdout, &stderr) }()
		var addr string
		testutil.Eventually(t, 20*time.Second, 50*time.Millisecond, func() (bool, string) {
			m := regexp.MustCompile(`on http://(\S+)/`).FindStringSubmatch(stdout.String())
			if m != nil {
				addr = m[1]
			}
			return m != nil, "replay's address; stderr: " + stderr.String()
		})
		return addr, func() {
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("replay exited %d: %s", code, stderr.String())
			}
			serveContext = old
		}
	}

	addr, stop := replay()
	got := recordedSeries(t, addr)
	stop()
	if len(got) != len(want) || len(got) < 10 {
		t.Fatalf("replay serves %d points, the recording holds %d", len(got), len(want))
	}
	for i := range want {
		a, b := want[i].KV.Window, got[i].KV.Window
		if !want[i].Time.Equal(got[i].Time) || a.OK() != b.OK() || a.V != b.V {
			t.Fatalf("point %d: recorded %v %v, served %v %v", i, want[i].Time, a, got[i].Time, b)
		}
	}

	// At -speed 1 the points arrive as they were recorded: once the first
	// ones are served, a few of them and not all.
	addr, stop = replay("-speed", "1")
	defer stop()
	var n int
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() (bool, string) {
		n = len(recordedSeries(t, addr))
		return n > 0, "no point served at -speed 1"
	})
	if n >= len(want)-2 {
		t.Errorf("at -speed 1, %d of %d points served at once", n, len(want))
	}
}

// Mistakes on replay's command line are one line and exit 2.
func TestReplayUsageErrors(t *testing.T) {
	empty := t.TempDir()
	f := func(args []string, want string) {
		t.Helper()
		var o, e strings.Builder
		if code := dispatch(append([]string{"replay"}, args...), &o, &e); code != 2 || !strings.Contains(e.String(), want) || strings.Count(e.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want 2 and one line with %q", args, code, e.String(), want)
		}
	}
	f([]string{empty}, "not a ptdmon recording (no run.json)")
	f([]string{}, "missing argument DIR")
	f([]string{empty, "-speed", "-1"}, "-speed -1 must be ≥ 0")
}

func TestRunTime(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f := func(s string, want time.Time, wantErr string) {
		t.Helper()
		got, err := runTime("-from", s, start)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%q: %v, want error %q", s, err, wantErr)
			}
			return
		}
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
		}
	}
	f("", time.Time{}, "")
	f("10m", start.Add(10*time.Minute), "")
	f("2026-03-01T12:30:00Z", start.Add(30*time.Minute), "")
	f("1772368200", start.Add(30*time.Minute), "")
	f("yesterday", time.Time{}, "want RFC 3339")
}

// ptdmon report reads what ptdmon record wrote: what ran (the hash of the
// configuration, the targets) and the recorded points.
func TestReportOfARecording(t *testing.T) {
	t.Parallel() // its own simulator and directory; reads loadRecording, which only serial tests replace
	cfg := recordingSimConfig(t, "kv-bound")
	dir := filepath.Join(t.TempDir(), "round1")
	recordRound(t, cfg, dir, "4")
	var o, e strings.Builder
	run, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := run.Meta()
	run.Close()
	out := filepath.Join(t.TempDir(), "round1.json")
	o.Reset()
	e.Reset()
	if code := dispatch([]string{"report", dir, "-format", "json", "-o", out}, &o, &e); code != 0 {
		t.Fatalf("report exited %d: %s", code, e.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), m.ConfigHash) || !strings.Contains(string(b), m.Targets[0].Name) {
		t.Errorf("the report does not name the recorded configuration hash %s and target %s:\n%.600s", m.ConfigHash, m.Targets[0].Name, b)
	}
}

// The histograms a report reads from a recording count what the
// completion counters count: over a span, the decode instances' E2E
// observations are the increase of their completion counters between the
// same two recorded reads (the windowed rates' first and last samples).
func TestRecordedBucketsCountTheCompletions(t *testing.T) {
	t.Parallel() // its own simulator and directory; the record command's state is its own
	cfg := recordingSimConfig(t, "balanced")
	dir := filepath.Join(t.TempDir(), "round1")
	recordRound(t, cfg, dir, "15")
	in, err := recordingInput(dir)
	if err != nil {
		t.Fatal(err)
	}
	pts := in.Points
	if len(pts) < 40 {
		t.Fatalf("%d points", len(pts))
	}
	// The last 7 s: decode completes requests by then.
	from, to := pts[len(pts)-28].Time, pts[len(pts)-1].Time
	lat, err := in.Buckets(from, to)
	if err != nil {
		t.Fatalf("no histograms over the span: %v", err)
	}
	b := lat.Whole
	var observed float64
	for _, h := range b.Decode.E2E {
		observed += h.Count
	}
	// The counters' side: the same recording fed to a ledger whose window
	// is the span, each decode instance's windowed rate times the real
	// time between the reads it was computed from.
	run, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	lc := run.LedgerConfig(1)
	lc.Window = to.Sub(from)
	l := ledger.New(lc)
	if _, err := run.Feed(l, to, nil); err != nil {
		t.Fatal(err)
	}
	last, ok := l.Latest()
	if !ok {
		t.Fatal("no point at the span's end")
	}
	var counted float64
	var instances int
	for _, ip := range last.Instances {
		if ip.Role != string(engine.Decode) || !ip.Window.OK() {
			continue
		}
		instances++
		counted += ip.Window.V * ip.WindowTo.Sub(ip.WindowFrom).Seconds()
	}
	if instances != len(b.Decode.E2E) || counted < 5 || math.Abs(observed-counted) > 1e-6*counted+1e-9 {
		t.Errorf("over %v: E2E histograms of %d decode instances observed %.3f requests, the completion counters of %d counted %.3f",
			to.Sub(from), len(b.Decode.E2E), observed, instances, counted)
	}
}

// recordRound runs `ptdmon record` with cfg into dir around a command that
// sleeps secs seconds.
func recordRound(t *testing.T, cfg, dir, secs string) {
	t.Helper()
	var o, e strings.Builder
	if code := dispatch([]string{"record", "-config", cfg, "-o", dir, "-settle", "250ms", "--", "sleep", secs}, &o, &e); code != 0 {
		t.Fatalf("record exited %d: %s", code, e.String())
	}
}

// ptdmon record counts the targets file_sd gives as it counts its own.
func TestRecordCountsFileSDTargets(t *testing.T) {
	t.Parallel() // its own simulator and directory
	cfg := recordingSimConfig(t, "balanced")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The same targets, from a file_sd file with the plain role label.
	var groups []string
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		m := regexp.MustCompile(`name: (\S+), url: "http://([^/]+)/metrics", role: (\w+), engine: (\w+)`).FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		groups = append(groups, fmt.Sprintf(`{"targets": [%q], "labels": {"ptd_target": %q, "role": %q, "ptd_engine": %q}}`, m[2], m[1], m[3], m[4]))
	}
	sd := filepath.Join(t.TempDir(), "sd.json")
	if err := os.WriteFile(sd, []byte("["+strings.Join(groups, ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	head := strings.SplitN(string(b), "targets:", 2)[0]
	cfg2 := filepath.Join(t.TempDir(), "ptdmon.yaml")
	if err := os.WriteFile(cfg2, []byte(head+fmt.Sprintf("file_sd:\n  - files: [%q]\n", sd)), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := dispatch([]string{"record", "-config", cfg2, "-o", filepath.Join(t.TempDir(), "r"), "-settle", "300ms", "--", "true"}, &stdout, &stderr)
	if want := fmt.Sprintf("watching %d targets", n); code != 0 || n == 0 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d; stderr does not say %q:\n%s", code, want, stderr.String())
	}
}
