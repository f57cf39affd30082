package goruntime

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// Turned off, a Sizer leaves GOMAXPROCS and the memory limit as they are.
func TestSizerOff(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	const limit = 1 << 40
	debug.SetMemoryLimit(limit)
	s := New(Options{Interval: time.Millisecond, ExtraMemoryPerTarget: 1 << 20})
	s.SetTargets(1000)
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("memory limit %d MiB, want it left at %d MiB", got>>20, limit>>20)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS %d, want it left at %d", got, procs)
	}
	if processors.started {
		t.Error("the processors' controller started")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s.Run(ctx) // returns at once
}

// Turned on, the memory limit follows the targets and what each costs
// besides (a recording's TSDB head).
func TestSizerMemory(t *testing.T) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set: the limit is the user's")
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	s := New(Options{Memory: true, ExtraMemoryPerTarget: 320 << 10})
	s.SetTargets(200)
	if got, want := debug.SetMemoryLimit(-1), int64(64<<20+200*(384+320)<<10); got != want {
		t.Errorf("200 targets recorded: limit %d MiB, want %d MiB", got>>20, want>>20)
	}
}
