package tui

import (
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/sim/simtest"
	"github.com/ptdmon/ptdmon/internal/slo"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// clock is the frame's local time, which depends on the machine's zone.
var clock = regexp.MustCompile(`^ptdmon  \d\d:\d\d:\d\d`)

// TestGoldenFrames draws top as a terminal of 80×24 and 80×40 would show
// it: the restart scenario while vllm-p0 is down, two pools, SLO
// thresholds set. Every frame fits its terminal and keeps what needs
// action — the verdict, the failed scrapes, the down instance, the
// advice — leaving whole
// sections out, with a line naming them; the frames are golden files
// (-update rewrites them).
func TestGoldenFrames(t *testing.T) {
	sc, err := sim.LoadScenario("restart")
	if err != nil {
		t.Fatal(err)
	}
	r, err := simtest.RunHistograms(sc, 1, 22*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer((&api.Server{Ledger: r.Ledger, SLO: slo.Thresholds{TTFT: 2, E2E: 20}}).Handler())
	defer srv.Close()
	c := &Client{Base: srv.URL, HTTP: srv.Client()}
	ctx := t.Context()
	snap, err := c.Stages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hist, err := c.History(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	a, aerr := c.Advice(ctx)
	if aerr != nil {
		t.Fatal(aerr)
	}
	f := func(width, height int) {
		name := strconv.Itoa(width) + "x" + strconv.Itoa(height)
		t.Run(name, func(t *testing.T) {
			table, err := c.Instances(ctx, height)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			Draw(&b, Frame{Snap: snap, History: hist[:len(hist)-1], Advice: &AdviceResult{a, nil}, Table: table, Height: height}, width)
			got := clock.ReplaceAllString(b.String(), "ptdmon  12:00:00")
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			if len(lines) > height {
				t.Errorf("%d lines for a terminal of %d", len(lines), height)
			}
			for _, l := range lines {
				if n := len([]rune(l)); n > width {
					t.Errorf("line of %d columns: %q", n, l)
				}
			}
			for _, want := range []string{"VERDICT  ", "vllm-p0", "DOWN", "\nAdvice   ", "\nSLO      ", "(to fit ", "\nSCRAPES  "} {
				if !strings.Contains(got, want) {
					t.Errorf("frame lacks %q", want)
				}
			}
			path := filepath.Join("testdata", "top-"+name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("frame differs from %s (-update rewrites it):\n%s", path, got)
			}
		})
	}
	f(80, 24)
	f(80, 40)
}
