package testutil

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder keeps what Eventually reports instead of failing the test; its
// Fatalf ends the goroutine as testing.T's does.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// eventually runs Eventually on a goroutine of its own, as Fatalf ends it,
// and returns its failure ("" when cond held) and its duration.
func eventually(t *testing.T, timeout, tick time.Duration, cond func() (bool, string)) (string, time.Duration) {
	r := &recorder{TB: t}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		Eventually(r, timeout, tick, cond)
	}()
	<-done
	return r.fatal, time.Since(start)
}

func TestEventually(t *testing.T) {
	calls := 0
	fatal, _ := eventually(t, 5*time.Second, time.Millisecond, func() (bool, string) {
		calls++
		return calls == 3, fmt.Sprintf("call %d", calls)
	})
	if fatal != "" || calls != 3 {
		t.Errorf("held at the third call: failed %q after %d calls", fatal, calls)
	}

	calls = 0
	fatal, took := eventually(t, 50*time.Millisecond, 10*time.Millisecond, func() (bool, string) {
		calls++
		return false, fmt.Sprintf("call %d", calls)
	})
	if want := fmt.Sprintf("not within 50ms: call %d", calls); fatal != want {
		t.Errorf("never held: failed %q, want %q", fatal, want)
	}
	if took < 50*time.Millisecond || calls < 2 {
		t.Errorf("never held: gave up after %v and %d calls, want 50ms and more than one", took, calls)
	}

	calls = 0
	fatal, _ = eventually(t, 0, time.Hour, func() (bool, string) {
		calls++
		return calls == 1, "not yet"
	})
	if fatal != "" || calls != 1 {
		t.Errorf("no time at all still asks once: failed %q after %d calls", fatal, calls)
	}
	if fatal, _ = eventually(t, 0, time.Hour, func() (bool, string) { return false, "never" }); !strings.HasSuffix(fatal, ": never") {
		t.Errorf("no time at all: failed %q, want the reason", fatal)
	}
}
