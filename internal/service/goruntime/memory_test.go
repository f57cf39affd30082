package goruntime

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set: the limit is the user's") // the case the code leaves alone
	}
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	f := func(targets int, want int64) {
		t.Helper()
		setMemoryLimit(targets, 0)
		if got := debug.SetMemoryLimit(-1); got != want {
			t.Errorf("%d targets: limit %d MiB, want %d MiB", targets, got>>20, want>>20)
		}
	}
	f(1, 128<<20)
	f(200, 64<<20+200*384<<10) // 139 MiB: the floor no longer sets it
	f(1000, 64<<20+1000*384<<10)
	f(0, 64<<20+1000*384<<10) // no targets: unchanged
	// A recording's head, per target, on top.
	setMemoryLimit(200, 320<<10)
	if got, want := debug.SetMemoryLimit(-1), int64(64<<20+200*(384+320)<<10); got != want {
		t.Errorf("200 targets recorded: limit %d MiB, want %d MiB", got>>20, want>>20)
	}
}
