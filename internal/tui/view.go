// Package tui renders ptdmon's state as text for a terminal: the three stage
// rates with a sparkline of their recent history, the verdict, the hand-off
// queues and the instances. It reads the JSON API, like any other client,
// and decodes it with the API's own types.
package tui

import (
	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Snapshot is /api/v1/snapshot.
type Snapshot = api.Snapshot

// Tick is one point of the history with the verdict at it (from the
// series' verdict timeline, or the snapshot's verdict; "" when not known).
type Tick struct {
	ledger.Point
	Verdict diagnose.Class
}
