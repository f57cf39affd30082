package sim

import (
	"errors"
	"time"

	ptd "github.com/ptdmon/ptdmon/internal/engine"
)

// Overrides are command-line values that, when set (non-zero), replace the
// scenario's values in every group.
type Overrides struct {
	Rate             float64 // total arrival rate, split over groups in proportion
	PrefillTokPerSec float64
	KVBandwidth      float64
	Prefill, Decode  int // instances per group
	InputTokens      int
	OutputTokens     int
	Threads          int
	DecodeBatch      int
	KVBytes          int64
	DecodeStep       time.Duration
	Model            string
	// Connectors are KV connectors by engine: each replaces the connector
	// of every group of its engine.
	Connectors map[ptd.Engine]string
}

// Apply changes sc and validates the result.
func (o Overrides) Apply(sc *Scenario) error {
	if o.Rate < 0 || o.Prefill < 0 || o.Decode < 0 || o.InputTokens < 0 || o.OutputTokens < 0 || o.KVBytes < 0 ||
		o.PrefillTokPerSec < 0 || o.KVBandwidth < 0 || o.Threads < 0 || o.DecodeBatch < 0 || o.DecodeStep < 0 {
		return errors.New("override values must not be negative")
	}
	if o.Rate > 0 {
		sc.SetTotalRate(o.Rate)
	}
	if o.InputTokens > 0 {
		sc.InputTokens = o.InputTokens
	}
	if o.OutputTokens > 0 {
		sc.OutputTokens = o.OutputTokens
	}
	if o.KVBytes > 0 {
		sc.KVBytesPerRequest = o.KVBytes
	}
	if o.Model != "" {
		sc.Model = o.Model
	}
	for i := range sc.Groups {
		g := &sc.Groups[i]
		if o.Prefill > 0 {
			g.Prefill.Instances = o.Prefill
		}
		if o.Decode > 0 {
			g.Decode.Instances = o.Decode
		}
		if o.PrefillTokPerSec > 0 {
			g.Prefill.TokensPerSec = o.PrefillTokPerSec
		}
		if o.KVBandwidth > 0 {
			g.Transfer.BandwidthBytesPerSec = o.KVBandwidth
		}
		if o.Threads > 0 {
			g.Transfer.Threads = o.Threads
		}
		if o.DecodeStep > 0 {
			g.Decode.StepTime = o.DecodeStep
		}
		if o.DecodeBatch > 0 {
			g.Decode.MaxBatch = o.DecodeBatch
			if g.Decode.KVSlots < o.DecodeBatch {
				g.Decode.KVSlots = o.DecodeBatch
			}
		}
		if c := o.Connectors[ptd.Engine(g.Engine)]; c != "" {
			g.Connector = c
		}
	}
	// Restarts and fault lists name instances; drop those that a smaller
	// instance count removed rather than failing on them.
	names := map[string]bool{}
	for _, n := range sc.InstanceNames() {
		names[n] = true
	}
	var rs []Restart
	for _, r := range sc.Restarts {
		if names[r.Instance] {
			rs = append(rs, r)
		}
	}
	sc.Restarts = rs
	var fi []string
	for _, n := range sc.Faults.Instances {
		if names[n] {
			fi = append(fi, n)
		}
	}
	sc.Faults.Instances = fi
	var as []string
	for _, n := range sc.Asleep {
		if names[n] {
			as = append(as, n)
		}
	}
	sc.Asleep = as
	return sc.Validate()
}
