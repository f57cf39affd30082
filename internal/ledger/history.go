package ledger

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger/history"
)

// hotSpan is how far back a point keeps its per-instance detail as the
// InstancePoints it was computed with: the verdict (twice its default 30 s
// window and an interval) and the advice's arrival rate (60 s) read inside
// it on every tick without copying. Older detail lives in column blocks; a
// longer verdict window reads correctly but rebuilds the older points.
const hotSpan = 70 * time.Second

// newHistory is the history of a ledger configured with cfg's defaults
// applied: its points, its budget, and the points within hotSpan hot.
func newHistory(cfg *Config) history.History {
	return history.New(cfg.History, cfg.InstanceBudget, int(hotSpan/cfg.Interval)+1, history.SegmentPoints)
}

// Detail says which per-instance detail a reader of the history wants; the
// zero value is every instance.
type Detail = history.Detail

// Latest returns the newest point and whether there is one.
func (l *Ledger) Latest() (Point, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hist.Latest()
}

// Since returns the points newer than t, oldest first.
func (l *Ledger) Since(t time.Time) []Point {
	l.mu.Lock()
	w, _ := l.hist.Collect(t, -1)
	l.mu.Unlock()
	if out := w.Complete(Detail{}); out != nil {
		return out
	}
	return []Point{}
}

// Range returns at most max points newer than t, oldest first, and whether
// more points follow them.
func (l *Ledger) Range(t time.Time, max int) ([]Point, bool) {
	return l.RangeDetail(t, max, Detail{})
}

// RangeDetail is Range with only the per-instance detail d asks for: a
// reader that shows one instance or none does not pay for rebuilding the
// others from the columns.
func (l *Ledger) RangeDetail(t time.Time, max int, d Detail) ([]Point, bool) {
	l.mu.Lock()
	w, more := l.hist.Collect(t, max)
	l.mu.Unlock()
	return w.Complete(d), more
}

// Checkpoints of the history (history.Pending): a recording keeps them
// beside its inputs so that a resume restores the points rather than
// recomputing them (docs/runs.md#resume).

// ErrCheckpointMismatch says that pieces were computed by a ledger
// configured otherwise than the one asked to restore them (or by another
// version): their points are not what this ledger would compute.
var ErrCheckpointMismatch = history.ErrCheckpointMismatch

// CheckpointHeader is what a piece says of itself before it is decoded.
type CheckpointHeader = history.CheckpointHeader

// ParseCheckpointHeader reads a piece's header and returns the rest.
func ParseCheckpointHeader(b []byte) (CheckpointHeader, []byte, error) {
	return history.ParseCheckpointHeader(b)
}

// KeepCheckpoints makes the ledger hand out, through Checkpoint, every
// point appended from now on once it is sealed.
func (l *Ledger) KeepCheckpoints() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hist.KeepCheckpoints()
}

// CheckpointKey identifies the configuration a point's values depend on:
// a ledger restores only pieces computed under its own.
func (l *Ledger) CheckpointKey() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return checkpointKey(&l.cfg)
}

func checkpointKey(c *Config) uint64 { return checkpointKeyOf(c, history.CheckpointVersion) }

// checkpointKeyOf is the key a ledger configured as c gives pieces of a
// version: a version-1 piece restores under its own key.
func checkpointKeyOf(c *Config, version byte) uint64 {
	h := fnv.New64a()
	// fmt prints maps in key order.
	fmt.Fprintf(h, "v%d|%d|%d|%d|%d|%d|%v|%v", version, c.Interval, c.Window, c.StaleAfter,
		c.MaxSeries, c.SeriesStaleAfter, c.KVRequest, c.PoolRequests)
	return h.Sum64()
}

// Checkpoint returns the points sealed since the last call (KeepCheckpoints
// first), oldest first, as encoded pieces of at most one segment each; nil
// when there are none. The copy under the lock takes references only: the
// encoding is done outside it.
func (l *Ledger) Checkpoint() ([][]byte, error) {
	l.mu.Lock()
	pending := l.hist.Ready()
	key := checkpointKey(&l.cfg)
	l.mu.Unlock()
	return pending.Encode(key)
}

// Restore appends the points of pieces (Checkpoint's, oldest first) to
// the history as they were computed, without recomputing them: only the
// newest pieces the history keeps are decoded, and only their points from
// from on (zero: any), as many as the history keeps, newer than the
// history's newest. Points recomputed afterwards (the inputs since the
// last piece, and a warm-up before them) are stored only from after the
// last restored point on. It returns the points restored and the time of
// the last; on an error the pieces before the damaged one stay restored.
func (l *Ledger) Restore(pieces [][]byte, from time.Time) (n int, last time.Time, err error) {
	l.mu.Lock()
	cfg := l.cfg
	l.mu.Unlock()
	return l.hist.Restore(&l.mu, pieces, from, func(v byte) uint64 { return checkpointKeyOf(&cfg, v) })
}

// CheckpointAll makes the next Checkpoint hand out every stored point
// that is ready again, restored ones included: a recording whose
// checkpoint could not be used whole starts it over.
func (l *Ledger) CheckpointAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hist.CheckpointAll()
}
