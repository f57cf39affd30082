package service

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

func TestDownWatch(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	down := []ledger.TargetStatus{{Name: "p0", LastError: "connection refused"}, {Name: "d0", LastError: "connection refused"}}
	oneUp := []ledger.TargetStatus{{Name: "p0", Up: true}, {Name: "d0"}}
	d := &downWatch{every: 30 * time.Second}
	f := func(name string, at time.Duration, sts []ledger.TargetStatus, want string) {
		t.Run(name, func(t *testing.T) {
			_, msg, _, ok := d.observe(t0.Add(at), sts)
			if !ok {
				msg = ""
			}
			if msg != want {
				t.Errorf("at %v: logged %q, want %q", at, msg, want)
			}
		})
	}
	// Steps run in order: the watch keeps its state between them.
	f("one up: quiet", 0, oneUp, "")
	f("all down: said at once", 1*time.Second, down, "every target is down: no rate can be computed")
	f("still down: quiet", 2*time.Second, down, "")
	f("still down 29 s later: quiet", 30*time.Second, down, "")
	f("still down 30 s later: said again", 31*time.Second, down, "every target is still down")
	f("one back: said", 32*time.Second, oneUp, "targets are up again")
	f("up: quiet", 33*time.Second, oneUp, "")
	f("no targets: quiet", 34*time.Second, nil, "")
}

// syncBuf is a log sink read while the service writes it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServeSaysAllTargetsDown: with every target refusing connections,
// the log says so after the start line instead of staying silent.
func TestServeSaysAllTargetsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()
	cfg := &config.Config{Listen: "127.0.0.1:0", Interval: config.Duration{Duration: 200 * time.Millisecond},
		Targets: []config.Target{{Name: "p0", URL: refused, Role: "prefill"}}}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs syncBuf
	// Bounds with room for a starved machine: the ticks are 200 ms apart,
	// so the warning normally comes within a second.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	}()
	testutil.Eventually(t, 30*time.Second, 50*time.Millisecond, func() (bool, string) {
		return strings.Contains(logs.String(), "every target is down"), "nothing said about the down target; log:\n" + logs.String()
	})
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestServeRepeatsAllTargetsDown: in fake time, the warning that every
// target is down is said at once, again every 30 s while it lasts (not on
// every tick), and the recovery is said once.
func TestServeRepeatsAllTargetsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		cfg := &config.Config{Interval: config.Duration{Duration: 200 * time.Millisecond},
			Targets: []config.Target{{Name: "p0", URL: "http://p0:8000/metrics", Role: "prefill"}}}
		rs := startBubble(t, cfg, kvsize.Request{}, n)
		count := func(msg string) int { return strings.Count(rs.logs.String(), msg) }
		f := func(after time.Duration, down, still, back int) {
			t.Helper()
			time.Sleep(after)
			synctest.Wait()
			if count("every target is down") != down || count("every target is still down") != still || count("targets are up again") != back {
				t.Fatalf("said down %d, still down %d, up again %d times; want %d, %d, %d; log:\n%s",
					count("every target is down"), count("every target is still down"), count("targets are up again"), down, still, back, rs.logs.String())
			}
		}
		f(time.Second, 1, 0, 0)
		if !strings.Contains(rs.logs.String(), "connection refused") {
			t.Errorf("the log does not say why:\n%s", rs.logs.String())
		}
		f(29*time.Second, 1, 0, 0) // 30 s in: the first said at the first tick, < 30 s ago
		f(time.Second, 1, 1, 0)
		f(29*time.Second, 1, 1, 0)
		f(time.Second, 1, 2, 0)
		memFake(t, n, "p0:8000", 0, 1, vllmBody("llama", 1, 5, "", 0))
		f(time.Second, 1, 2, 1)
		f(time.Minute, 1, 2, 1)
	})
}
