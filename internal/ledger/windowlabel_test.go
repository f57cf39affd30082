package ledger

import (
	"testing"
	"time"
)

func TestWindowLabel(t *testing.T) {
	for d, want := range map[time.Duration]string{
		DefaultWindow:           "5s",
		time.Minute:             "1m",
		90 * time.Second:        "90s",
		2 * time.Hour:           "120m",
		1500 * time.Millisecond: "1500ms",
	} {
		if got := WindowLabel(d); got != want {
			t.Errorf("WindowLabel(%v) = %q, want %q", d, got, want)
		}
	}
}
