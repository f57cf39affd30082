package api

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// kvPerTransfer is each pool's bytes per KV transfer, for the verdict to
// set against the pool's own B_request (diagnose.Config.KVPerTransfer).
func (pl pooling) kvPerTransfer(l *ledger.Ledger) func(string, time.Time) (float64, bool) {
	return func(pool string, at time.Time) (float64, bool) {
		return l.KVPerTransfer(func(target string) bool {
			return pl.of(&ledger.InstancePoint{Target: target, Engine: pl.meta[target].Engine}) == pool
		}, at)
	}
}
