package benchresult

import (
	"fmt"
	"time"
)

// Span is the wrapped command's start and end, as ptdmon record measured
// them (zero when the run was not recorded around the command).
type Span struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Known is whether the span was measured.
func (s Span) Known() bool { return !s.Start.IsZero() && s.End.After(s.Start) }

// The ways a result is placed on the recording's clock.
const (
	// PlacedWall: the file's own wall-clock times (AIPerf's epoch ns,
	// GuideLLM's Unix seconds, an llm-d report's run.time).
	PlacedWall = "wall-clock"
	// PlacedCommandEnd: a monotonic tool's benchmark, its length known,
	// ends where the command ended (each tool writes its result last).
	PlacedCommandEnd = "anchored to the command's end"
	// PlacedNone: no way to place it.
	PlacedNone = "not placed"
)

// Placement is where a benchmark ran on the wall clock and how sure that
// is: Residual bounds the error of the placement in seconds.
type Placement struct {
	Method   string    `json:"method"`
	From     time.Time `json:"from,omitzero"`
	To       time.Time `json:"to,omitzero"`
	Residual *float64  `json:"residual_seconds"`
	Why      string    `json:"why"`
}

// Placed is whether the benchmark has a span on the wall clock.
func (p Placement) Placed() bool { return p.Method != PlacedNone && p.To.After(p.From) }

// Place puts r on the wall clock. A wall-clock tool is placed by its own
// times; its residual is how far they lie outside the command's span (0
// when inside; absent without a command span). A monotonic tool knows only
// its benchmark's length: that length is put to end at the command's end,
// and the residual is the command's length minus the benchmark's, the
// time spent before and after it (loading a tokenizer, writing the file),
// which bounds how early the benchmark may really have run.
func Place(r Result, cmd Span) Placement {
	if r.Clock == clockWall && r.End.After(r.Start) {
		p := Placement{Method: PlacedWall, From: r.Start, To: r.End}
		if !cmd.Known() {
			p.Why = "placed by the file's own times; no command span was recorded to check them against"
			return p
		}
		out := max(0, cmd.Start.Sub(r.Start).Seconds()) + max(0, r.End.Sub(cmd.End).Seconds())
		p.Residual = &out
		p.Why = fmt.Sprintf("placed by the file's own times; %.3g s of them lie outside the command's span", out)
		return p
	}
	if r.Duration == nil || *r.Duration <= 0 {
		return Placement{Method: PlacedNone, Why: "the file gives no benchmark length"}
	}
	if !cmd.Known() {
		return Placement{Method: PlacedNone,
			Why: r.Tool + " times its requests on a monotonic clock; without the command's start and end (ptdmon record) the benchmark cannot be placed"}
	}
	d := time.Duration(*r.Duration * float64(time.Second))
	slack := cmd.End.Sub(cmd.Start) - d
	if slack < -time.Second {
		return Placement{Method: PlacedNone,
			Why: fmt.Sprintf("the benchmark lasted %.1f s, longer than the command's %.1f s: the file is not from this run", d.Seconds(), cmd.End.Sub(cmd.Start).Seconds())}
	}
	res := max(0, slack.Seconds())
	return Placement{Method: PlacedCommandEnd, From: cmd.End.Add(-d), To: cmd.End, Residual: &res,
		Why: fmt.Sprintf("%s times its requests on a monotonic clock: its %.1f s benchmark is put at the end of the command, which ran %.3g s longer", r.Tool, d.Seconds(), res)}
}
