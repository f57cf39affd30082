package point

import (
	"reflect"

	"github.com/ptdmon/ptdmon/internal/engine"
)

// many per second, and their share of what they are a part of.
type FailureRate struct {
	PerSecond Num `json:"per_second"`
	Ratio     Num `json:"ratio"`
}

// Failures are a pool's failed KV transfers by class
// (docs/design.md#kv-failure-classes). A class no source of the pool
// counts is absent with that reason, never 0.
//
// The ratio of a class is its failures ÷ the transfers attempted, taken as
// the transfers counted plus the failures of every class: vLLM's
// connectors count a transfer only when it completes, so 100% failing
// reads 1, not a division by zero.
type Failures struct {
	Transfers    Num         `json:"transfers_per_second"`
	Network      FailureRate `json:"network"`
	Timeout      FailureRate `json:"timeout"`
	Expiry       FailureRate `json:"expiry"`
	Notification FailureRate `json:"notification"`
	Unclassified FailureRate `json:"unclassified"`
	// Recomputed is prefill work decode did itself: prompt tokens per
	// second computed on the pool's decode instances (after a failed KV
	// load, or for a request that skipped prefill), and their share of
	// decode's prompt tokens.
	Recomputed FailureRate `json:"recomputed_on_decode"`
	// Shed is load turned away before any engine queued it: requests per
	// second the pool's routers and engines shed for capacity, and their
	// share of the offered load, taken as served (decode's completions,
	// else prefill's) plus shed (docs/design.md#load-shed-before-the-engine).
	Shed FailureRate `json:"shed"`
	// Migrated is requests a router sent again to another worker after the
	// first was lost or failed them (Dynamo's migrations, the SGLang
	// gateway's retries): requests per second, and their share of the
	// requests sent to workers, served + migrated. Each is work done twice.
	Migrated FailureRate `json:"migrated"`
}

// FailureKind names a field of Failures: the failure classes, then
// recompute on decode.
type FailureKind string

// KindRecomputed is recompute on decode, the kind that is no failure
// counter: it is counted in prompt tokens.
const KindRecomputed FailureKind = "recomputed_on_decode"

// KindShed is load shed before the engine queue, the kind whose ratio is
// of the offered load, not of the KV transfers.
const KindShed FailureKind = "shed"

// KindMigrated is requests a router sent again to another worker, a share
// of the requests sent to workers.
const KindMigrated FailureKind = "migrated"

// FailureKinds lists the kinds in the order views show them.
var FailureKinds = []FailureKind{
	FailureKind(engine.FailNetwork), FailureKind(engine.FailTimeout), FailureKind(engine.FailExpiry),
	FailureKind(engine.FailNotification), FailureKind(engine.FailUnclassified), KindRecomputed, KindShed, KindMigrated,
}

// InTotal says whether kind k's failures enter the failed KV transfers'
// total: the failure classes but lost notifications (engine.FailureClass's
// InTotal); recompute on decode, shed load and migrations are no KV
// transfers.
func (k FailureKind) InTotal() bool {
	if k == KindRecomputed || k == KindShed || k == KindMigrated {
		return false
	}
	return engine.FailureClass(k).InTotal()
}

// Kind returns the rate of kind k (nil for a name that is none).
func (f *Failures) Kind(k FailureKind) *FailureRate {
	switch k {
	case FailureKind(engine.FailNetwork):
		return &f.Network
	case FailureKind(engine.FailTimeout):
		return &f.Timeout
	case FailureKind(engine.FailExpiry):
		return &f.Expiry
	case FailureKind(engine.FailNotification):
		return &f.Notification
	case FailureKind(engine.FailUnclassified):
		return &f.Unclassified
	case KindRecomputed:
		return &f.Recomputed
	case KindShed:
		return &f.Shed
	case KindMigrated:
		return &f.Migrated
	}
	return nil
}

// MarshalJSON adds the reasons of absent values.
func (f Failures) MarshalJSON() ([]byte, error) {
	type alias Failures
	return withAbsent(f, alias(f))
}

// UnmarshalJSON reads what MarshalJSON writes, reasons included.
func (f *Failures) UnmarshalJSON(b []byte) error {
	type alias Failures
	return withoutAbsent(b, reflect.ValueOf(f).Elem(), (*alias)(f))
}

// AbsentFailures is Failures with every value absent for why: for a pool
// the ledger has no values of.
func AbsentFailures(why string) Failures {
	n := Absent(why)
	r := FailureRate{PerSecond: n, Ratio: n}
	return Failures{Transfers: n, Network: r, Timeout: r, Expiry: r, Notification: r, Unclassified: r, Recomputed: r, Shed: r, Migrated: r}
}
