// Package testutil holds helpers shared by tests.
package testutil

import (
	"testing"
	"time"
)

// Eventually calls cond until it reports done, sleeping tick between
// calls, and fails t with cond's last reason once timeout has passed
// without it. cond runs at least once, on the caller's goroutine, so it may
// itself call t.Fatal.
func Eventually(t testing.TB, timeout, tick time.Duration, cond func() (done bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, why := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", timeout, why)
		}
		time.Sleep(tick)
	}
}
