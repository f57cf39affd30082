package tsdbsource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
)

// ReadRange reads [from, to] of a TSDB after the fact: it steps a source
// through the range at opts.Interval in the range's own time, each step
// evaluated at its own instant exactly as a live step at that instant
// would have been (the clock is the cursor plus Lag), and returns every
// point the ledger made, oldest first. l should hold the range's points
// (Config.History); the points are taken as they are made, so an older
// point's per-instance detail is kept whatever the ledger's budget.
func ReadRange(ctx context.Context, l *ledger.Ledger, opts Options, from, to time.Time) (Range, error) {
	if !to.After(from) {
		return Range{}, fmt.Errorf("range %v to %v: want from before to", from, to)
	}
	opts.defaults()
	cursor := from
	opts.Now = func() time.Time { return cursor.Add(opts.Lag) }
	s, err := New(l, opts)
	if err != nil {
		return Range{}, err
	}
	// One probe first, retried for at most probeTimeout: a TSDB that
	// cannot be read at all is an error, not a range of absent values.
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	_, _, err = s.fetch(pctx, from, s.opts.Window+2*s.opts.Interval)
	cancel()
	if err != nil {
		return Range{}, err
	}
	var pts []ledger.Point
	for ; !cursor.After(to); cursor = cursor.Add(opts.Interval) {
		if err := ctx.Err(); err != nil {
			return Range{}, err
		}
		s.Step(ctx)
		if p, ok := l.Latest(); ok {
			pts = append(pts, p)
		}
	}
	if len(s.targets) == 0 {
		return Range{}, errors.New("no engine series with a " + string(LabelTarget) + " label in the range: is this the TSDB that scrapes the engines with the configuration of `ptdmon gen prometheus`?")
	}
	r := Range{Points: pts}
	for _, t := range s.targets {
		r.Targets = append(r.Targets, t.info)
	}
	slices.SortFunc(r.Targets, func(a, b engine.Target) int { return strings.Compare(a.Name, b.Name) })
	return r, nil
}

// probeTimeout bounds the retries of ReadRange's first query.
const probeTimeout = 10 * time.Second

// Range is what ReadRange read: the ledger's points and the targets found.
type Range struct {
	Points  []ledger.Point
	Targets []engine.Target
}
