package goruntime

import (
	"testing"
	"time"
)

func TestProcsFor(t *testing.T) {
	f := func(targets int, interval time.Duration, limit, want int) {
		t.Helper()
		if got := procsFor(targets, interval, limit); got != want {
			t.Errorf("%d targets every %v, at most %d: %d processors, want %d", targets, interval, limit, got, want)
		}
	}
	f(1, time.Second, 8, 1)
	f(200, time.Second, 8, 1)
	f(250, time.Second, 8, 1)
	f(251, time.Second, 8, 2)
	f(1000, time.Second, 8, 4)
	f(5000, time.Second, 8, 8)         // the cores bound it
	f(200, 250*time.Millisecond, 8, 4) // 800 reads a second
	f(1000, 15*time.Second, 8, 1)      // Prometheus' usual interval
	f(200, time.Second, 0, 1)          // never below one
	f(200, 0, 8, 8)                    // no interval: as fast as it goes
	f(3, 10*time.Millisecond, 64, 2)   // 300 reads a second
}

func TestNextProcs(t *testing.T) {
	f := func(n, least, limit int, busy float64, want int) {
		t.Helper()
		if got := nextProcs(n, least, limit, busy); got != want {
			t.Errorf("%d processors (least %d, limit %d) busy %.2f: %d, want %d", n, least, limit, busy, got, want)
		}
	}
	f(1, 1, 8, 0.1, 1)  // idle at the least: stays
	f(1, 1, 8, 0.4, 1)  // between the bounds: stays
	f(1, 1, 8, 0.9, 2)  // busy: one more
	f(8, 1, 8, 0.99, 8) // not beyond the runtime's own choice
	f(3, 1, 8, 0.1, 2)  // idle: one back
	f(3, 3, 8, 0.1, 3)  // but not below what the targets need
	f(5, 6, 8, 0.5, 6)  // the targets grew: at least what they need
	f(9, 1, 8, 0.5, 8)  // the limit shrank
}

// A process whose processors are busy gets another; one that idles gives
// them back, down to what its targets need.
func TestProcsFollowTheLoad(t *testing.T) {
	var cpu time.Duration
	set := 4
	p := &procs{started: true, limit: 4, n: 4,
		cpuNow: func() (time.Duration, bool) { return cpu, true },
		apply:  func(n int) { set = n }}
	p.setTargets(10, time.Second)
	if set != 1 {
		t.Fatalf("10 targets: GOMAXPROCS %d, want 1", set)
	}
	at := time.Unix(1_800_000_000, 0)
	p.look(at)
	step := func(busy float64, want int) {
		t.Helper()
		at = at.Add(procsEvery)
		cpu += time.Duration(busy * float64(procsEvery) * float64(p.n))
		p.look(at)
		if set != want {
			t.Errorf("%.0f%% busy: GOMAXPROCS %d, want %d", 100*busy, set, want)
		}
	}
	step(0.9, 2)
	step(0.9, 3)
	step(0.4, 3)
	step(0.9, 4)
	step(0.9, 4) // the runtime's own choice is the most
	step(0.05, 3)
	step(0.05, 2)
	step(0.05, 1)
	step(0.05, 1) // what the targets need is the least
	p.setTargets(600, time.Second)
	if set != 3 {
		t.Errorf("600 targets: GOMAXPROCS %d, want 3", set)
	}
}
