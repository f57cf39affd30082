package reqtrace

// Span names one computed phase of a request.
type Span uint8

const (
	Queue Span = iota
	Prefill
	KVTransfer
	TTFT
	Decode
	E2E
	TPOT
	NumSpans
)

var spanNames = [NumSpans]string{"queue", "prefill", "kv_transfer", "ttft", "decode", "e2e", "tpot"}

func (s Span) String() string {
	if s < NumSpans {
		return spanNames[s]
	}
	return "span?"
}

// Tolerance absorbs float noise: derived times are arrival + ms parsed from
// "%.6f", so equal instants can differ by a few ulps (docs/trtllm.md#header-derived-phases).
const Tolerance = 1e-6

// Value is a span that is either known (OK) or missing with a Reason. The
// reason is categorical (no numbers) so missing spans can be counted by it.
type Value struct {
	Seconds float64
	OK      bool
	Reason  string
}

func known(s float64) Value       { return Value{Seconds: s, OK: true} }
func missing(reason string) Value { return Value{Reason: reason} }

// Stamp is one named instant of a request on a named clock.
type Stamp struct {
	Name  string
	Clock string // "disagg", "ctx", "gen" or "worker"
	T     float64
}

// diff is the span from a to b. Missing operands and negative results (beyond
// float noise) are reported, never returned as numbers.
func diff(a, b Stamp) Value {
	switch {
	case a.T == 0:
		return missing("no " + a.Name)
	case b.T == 0:
		return missing("no " + b.Name)
	}
	d := b.T - a.T
	if d < -Tolerance {
		return missing("negative: " + b.Name + " before " + a.Name)
	}
	if d < 0 {
		d = 0 // equal within float noise
	}
	return known(d)
}
