package ledger

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// KVPerTransfer is the mean bytes of one KV transfer over the span of 2 W
// ending at at (as far back as a target keeps its samples: a few transfers
// more than W holds, as hits come and go at random), over the targets keep
// keeps whose connector counts both its bytes and its transfers:
// Σ bytes/s ÷ Σ transfers/s. It is false where none of them does, or where
// their samples no longer reach at.
// A pool's own figure, set against its own B_request, tells prefix-cache
// hits from another pool's bytes (docs/pools.md).
func (l *Ledger) KVPerTransfer(keep func(target string) bool, at time.Time) (float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	counted := l.kvCounted()
	span := 2 * l.cfg.Window
	var bytes, xfers float64
	for _, name := range l.names {
		t := l.targets[name]
		if !keep(name) || !t.has(engine.KVBytes) || !counted(t) {
			continue
		}
		b, _, _ := t.windowed(engine.KVBytes, at, span)
		x, _, _ := t.windowed(engine.KVTransfers, at, span)
		if b.OK() && x.OK() && x.V > 0 {
			bytes += b.V
			xfers += x.V
		}
	}
	if xfers <= 0 {
		return 0, false
	}
	return bytes / xfers, true
}

// KVTransfersOf is the KV transfers/s over the window W ending at at of the
// targets keep keeps that move KV, as the deployment's KV stage adds them
// up; absent with the reason where none counts its transfers.
func (l *Ledger) KVTransfersOf(keep func(target string) bool, at time.Time) Num {
	l.mu.Lock()
	defer l.mu.Unlock()
	counted := l.kvCounted()
	var s sum
	for _, name := range l.names {
		t := l.targets[name]
		if !keep(name) || !t.has(engine.KVBytes) || !counted(t) {
			continue
		}
		if why := l.unavailable(t, at); why != "" {
			continue
		}
		x, _, _ := t.windowed(engine.KVTransfers, at, l.cfg.Window)
		s.add(x)
	}
	return s.num("no instance of the pool exports a KV byte counter")
}
