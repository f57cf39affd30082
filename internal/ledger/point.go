// Package ledger keeps the per-series counter state of every target, turns it
// into per-instance and per-stage rates (instant and windowed, docs/design.md#rate-semantics), and
// holds a bounded history of the resulting points for the sinks to read
// (internal/ledger/history). The points are package point's; their names
// here are the same types.
package ledger

import "github.com/ptdmon/ptdmon/internal/ledger/point"

// The types of a point (package point).
type (
	Batch         = point.Batch
	Point         = point.Point
	StagePoint    = point.StagePoint
	KVPoint       = point.KVPoint
	Queues        = point.Queues
	Quant         = point.Quant
	InstancePoint = point.InstancePoint
	PoolPoint     = point.PoolPoint
	RouterPoint   = point.RouterPoint
	Failures      = point.Failures
	FailureRate   = point.FailureRate
	FailureKind   = point.FailureKind
	Phases        = point.Phases
	Num           = point.Num
	// WaitingReasons are a stage's waiting requests by reason.
	WaitingReasons = point.WaitingReasons
)

// KindRecomputed is recompute on decode, the kind that is no failure
// counter: it is counted in prompt tokens.
const KindRecomputed = point.KindRecomputed

// KindShed is load shed before the engine queue, a share of the offered load.
const KindShed = point.KindShed

// KindMigrated is requests a router sent again, a share of those sent to workers.
const KindMigrated = point.KindMigrated

// Sleep states of an instance (InstancePoint.Sleep): vLLM's sleep mode.
const (
	SleepWeightsOffloaded = point.SleepWeightsOffloaded
	SleepDiscardAll       = point.SleepDiscardAll
	SleepPaused           = point.SleepPaused
)

// WhyNoRouter is the reason of router values that no target gives.
const WhyNoRouter = point.WhyNoRouter

// whyNonFinite is the reason of a value that is +Inf or NaN.
const whyNonFinite = point.WhyNonFinite

// FailureKinds lists the kinds in the order views show them.
var FailureKinds = point.FailureKinds

// PhaseNames names the phases in order, as the API writes them.
var PhaseNames = point.PhaseNames

// Val is a present value; +Inf and NaN are absent, never shown.
func Val(v float64) Num { return point.Val(v) }

// Absent is a missing value with its reason.
func Absent(why string) Num { return point.Absent(why) }

// NoRouter is the RouterPoint of a pool or deployment without a router.
func NoRouter(pool string) RouterPoint { return point.NoRouter(pool) }

// AbsentPhases is Phases with every value absent for why.
func AbsentPhases(why string) Phases { return point.AbsentPhases(why) }

// AbsentFailures is Failures with every value absent for why: for a pool
// the ledger has no values of.
func AbsentFailures(why string) Failures { return point.AbsentFailures(why) }

// SplitPools is w's points pool by pool: for every pool that serves in
// any of them, its view at every point (Point.PoolView).
func SplitPools(w []Point) map[string][]Point { return point.SplitPools(w) }

// PoolNames lists the pools that serve at any point of w, sorted.
func PoolNames(w []Point) []string { return point.PoolNames(w) }

// PoolWindow is pool name's view at every point of w (Point.PoolView).
func PoolWindow(w []Point, name string) []Point { return point.PoolWindow(w, name) }
