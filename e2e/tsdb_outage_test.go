package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/gen"
	"github.com/ptdmon/ptdmon/internal/sim"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestTSDBOutage: when the Prometheus ptdmon reads from goes away, every
// engine shows as down with reason "source" and the stage rates are absent,
// not 0; when it comes back (same storage), the rates come back.
func TestTSDBOutage(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the 30 s outage run")
	}
	promBin := prometheusBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	cl := startSim(t, ctx, sc, 5, simSpeed)
	dir := t.TempDir()
	in := gen.FromConfig(simConfig(cl), cl.BytesPerRequest())
	in.PtdmonAddr = "127.0.0.1:" + freePort(t)
	promYML := writePromYML(t, dir, in)
	promAddr := "127.0.0.1:" + freePort(t)
	startProm := func() *exec.Cmd {
		cmd := exec.CommandContext(ctx, promBin, "--config.file="+promYML, "--storage.tsdb.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+promAddr, "--log.level=error")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitReady(t, "http://"+promAddr+"/-/ready")
		return cmd
	}
	prom := startProm()
	defer func() { prom.Process.Kill(); prom.Wait() }()
	base := runPtdmon(t, ctx, &config.Config{
		Window: config.Duration{Duration: window},
		Source: config.SourcePrometheus + "=http://" + promAddr,
	}, cl.BytesPerRequest())

	waitPoint := func(what string, within time.Duration, ok func(fleetPoint, bool) bool) fleetPoint {
		t.Helper()
		var p fleetPoint
		testutil.Eventually(t, within, 500*time.Millisecond, func() (bool, string) {
			var full bool
			p, full = getPoint(t, base)
			return ok(p, full), fmt.Sprintf("%s (last point %+v)", what, p)
		})
		return p
	}
	waitPoint("all three stage rates from Prometheus", 30*time.Second, func(p fleetPoint, full bool) bool { return full && !p.Partial })

	prom.Process.Kill()
	prom.Wait()
	p := waitPoint("every engine down with reason source", 10*time.Second, func(p fleetPoint, full bool) bool {
		if full || len(p.Targets) == 0 {
			return false
		}
		for _, tg := range p.Targets {
			if tg.Up || tg.Failures["source"] == 0 {
				return false
			}
		}
		return true
	})
	for _, tg := range p.Targets {
		if !strings.Contains(tg.LastError, promAddr) {
			t.Errorf("%s: last error %q does not name the TSDB", tg.Name, tg.LastError)
		}
	}
	if n := len(p.Targets); n != len(cl.Targets()) {
		t.Errorf("%d targets during the outage, want all %d kept", n, len(cl.Targets()))
	}

	prom = startProm()
	waitPoint("stage rates back after Prometheus restarted", 30*time.Second, func(p fleetPoint, full bool) bool { return full && !p.Partial })
}
