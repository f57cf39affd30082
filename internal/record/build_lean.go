//go:build norecord

package record

import (
	"time"

	"github.com/ptdmon/ptdmon/internal/advice"
	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// Included says this build writes and reads recordings: this one does not,
// and the types below only keep their callers compiling.
const Included = false

// Recorder is never made in this build: Create answers ErrLeftOut.
type Recorder struct{}

// Create answers ErrLeftOut.
func Create(Options) (*Recorder, error) { return nil, ErrLeftOut }

func (*Recorder) Resume(*ledger.Ledger) (int, error)           { return 0, ErrLeftOut }
func (*Recorder) Annotate(time.Time, string) error             { return ErrLeftOut }
func (*Recorder) Status() (string, uint64)                     { return ErrLeftOut.Error(), 0 }
func (*Recorder) Dir() string                                  { return "" }
func (*Recorder) Targets([]engine.Target)                      {}
func (*Recorder) Scrape(ledger.Scrape)                         {}
func (*Recorder) TickMeta(func() map[string]ledger.TargetMeta) {}
func (*Recorder) Tick(time.Time, ledger.Point)                 {}
func (*Recorder) Close() error                                 { return nil }

// Run is never made in this build: Open answers ErrLeftOut.
type Run struct{}

// Open answers ErrLeftOut.
func Open(string) (*Run, error) { return nil, ErrLeftOut }

func (*Run) Dir() string                                         { return "" }
func (*Run) Prior() (*advice.Prior, error)                       { return nil, ErrLeftOut }
func (*Run) Close() error                                        { return nil }
func (*Run) Meta() Meta                                          { return Meta{} }
func (*Run) Lost() []Loss                                        { return nil }
func (*Run) Span() (time.Time, time.Time, error)                 { return time.Time{}, time.Time{}, ErrLeftOut }
func (*Run) Replay(time.Time, time.Time) (*ledger.Ledger, error) { return nil, ErrLeftOut }
func (*Run) Points(time.Time, time.Time) ([]ledger.Point, error) { return nil, ErrLeftOut }
func (*Run) LedgerConfig(int) ledger.Config                      { return ledger.Config{} }
func (*Run) Ticks(time.Time) (int, error)                        { return 0, ErrLeftOut }
func (*Run) Latencies(time.Time, time.Time) (ledger.Buckets, map[string]ledger.Buckets, error) {
	return ledger.Buckets{}, nil, ErrLeftOut
}
func (*Run) Feed(*ledger.Ledger, time.Time, func(time.Time) bool) (int, error) {
	return 0, ErrLeftOut
}
