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
