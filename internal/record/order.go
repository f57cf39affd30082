//go:build !norecord

package record

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// readOrder keeps each target's reads in time order as they are fed to a
// ledger. Live, one target's reads reach the ledger one after the other,
// each newer than the last; a recording places each read after the tick
// before it reached the ledger, which gives that order again. A read older
// than one already fed (a recording whose order was written wrong, or
// samples its TSDB gives back out of order after a crash) would read as a
// reset of every counter of the target, and its rates as a spike: it is
// left out, as a scrape that did not happen, and counted.
type readOrder struct {
	last    map[string]time.Time
	skipped int
}

// admit reports whether s is newer than the target's last read fed, and
// then notes it.
func (o *readOrder) admit(s *ledger.Scrape) bool {
	if o.last == nil {
		o.last = map[string]time.Time{}
	}
	if last, ok := o.last[s.Target]; ok && !s.Time.After(last) {
		o.skipped++
		return false
	}
	o.last[s.Target] = s.Time
	return true
}
