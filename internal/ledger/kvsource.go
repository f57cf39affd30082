package ledger

import "github.com/ptdmon/ptdmon/internal/engine"

// kvCounted returns whether a target's KV bytes enter the KV sums (KV
// bytes/s, KV req/s and the global KV counter). A transfer library's own
// endpoint (NIXL's telemetry, the Mooncake transfer engine) counts the
// same transfers as an engine's KV connector in the same processes, so a
// library's bytes count only where no engine target counts KV bytes: each
// transfer is counted once (docs/design.md#kv-sources-and-the-side-each-counts).
func (l *Ledger) kvCounted() func(*target) bool {
	engineKV := false
	for _, t := range l.targets {
		if t.has(engine.KVBytes) && !t.engine.TransferLibrary() {
			engineKV = true
			break
		}
	}
	// The registry is asked only for the targets that count KV bytes.
	return func(t *target) bool { return !engineKV || !t.has(engine.KVBytes) || !t.engine.TransferLibrary() }
}

// kvShare is one target's part in the global KV counter. A transfer
// library's target stops counting once an engine target starts counting
// the same bytes, and starts again if that engine goes: only its bytes
// while it counts enter the counter, so the counter never goes down when
// the choice changes.
type kvShare struct {
	decided bool    // the first choice is made
	counted bool    // its bytes count now
	base    float64 // its total when it started counting
}

// globalKV returns the target's bytes in the global counter now, after
// moving what it counted into removed when it stops counting.
func (t *target) globalKV(counted bool, removed *float64) float64 {
	total, s := t.totals[engine.KVBytes], &t.kvGlobal
	switch {
	case !s.decided:
		s.decided, s.counted = true, counted
	case counted && !s.counted:
		s.counted, s.base = true, total
	case !counted && s.counted:
		s.counted = false
		*removed += total - s.base
	}
	if !s.counted {
		return 0
	}
	return total - s.base
}

// keptKV is what a target leaving the configuration leaves in the global
// counter.
func (t *target) keptKV() float64 {
	switch s := t.kvGlobal; {
	case !s.decided: // never ticked: counted, as by default
		return t.totals[engine.KVBytes]
	case s.counted:
		return t.totals[engine.KVBytes] - s.base
	}
	return 0
}
