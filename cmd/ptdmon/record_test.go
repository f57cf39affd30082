package main

import (
	"context"
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

	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// buildPtdmon builds this command into a temporary directory: the tests of
// a crash run the real binary in its own process.
func buildPtdmon(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ptdmon")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServe runs `ptdmon serve -record dir` and returns its address.
func startServe(t *testing.T, bin, cfg, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "-config", cfg, "-record", dir, "-listen", "127.0.0.1:0", "-log-level", "warn")
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

func series(t *testing.T, addr string) []ledger.Point {
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
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildPtdmon(t)
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

	first, addr := startServe(t, bin, cfg, dir)
	var before []ledger.Point
	testutil.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		before = series(t, addr)
		return len(before) >= 20, fmt.Sprintf("%d points before the kill, want 20", len(before))
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	killedAt := time.Now()
	time.Sleep(3 * time.Second) // the engines go on serving requests
	_, addr = startServe(t, bin, cfg, dir)
	restartedAt := time.Now()
	var after []ledger.Point
	testutil.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, string) {
		after = series(t, addr)
		return len(after) > 0 && after[len(after)-1].Time.After(restartedAt.Add(5*time.Second)), "5 s of points after the restart"
	})

	// The history: every point of the first process up to a few seconds
	// before the kill is there, with the same rates.
	byTime := map[time.Time]ledger.Point{}
	for _, p := range after {
		byTime[p.Time.UTC()] = p
	}
	kept := 0
	for _, p := range before {
		q, ok := byTime[p.Time.UTC()]
		if !ok {
			continue
		}
		kept++
		// Live rates divide by monotonic-clock spans, the recording keeps
		// wall-clock times: they agree to parts per million.
		if a, b := p.Decode.Window, q.Decode.Window; a.OK() != b.OK() || a.OK() && math.Abs(a.V-b.V) > 1e-6*math.Abs(a.V) {
			t.Errorf("decode rate at %v: %v before the kill, %v after the resume", p.Time, a, b)
		}
	}
	if kept < len(before)-6 {
		t.Errorf("resume kept %d of the %d points seen before the kill", kept, len(before))
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
