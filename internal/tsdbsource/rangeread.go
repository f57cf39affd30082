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
// point the ledger made, oldest first. l must hold the range's points
// (Config.History); its InstanceBudget bounds the per-instance detail.
func ReadRange(ctx context.Context, l *ledger.Ledger, opts Options, from, to time.Time) (Range, error) {
	if !to.After(from) {
		return Range{}, fmt.Errorf("range %v to %v: want from before to", from, to)
	}
	// A past range has no next scrape to keep up with: a slow TSDB makes
	// the read slow, never made-up outages.
	if opts.Timeout <= 0 {
		opts.Timeout = rangeQueryTimeout
	}
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = 3 * opts.Timeout
	}
	opts.defaults()
	steps := int(to.Sub(from)/opts.Interval) + 1
	if h := l.Config().History; h < steps {
		return Range{}, fmt.Errorf("range %v to %v is %d steps of %v; the ledger keeps %d points", from, to, steps, opts.Interval, h)
	}
	cursor := from
	opts.Now = func() time.Time { return cursor.Add(opts.Lag) }
	s, err := New(l, opts)
	if err != nil {
		return Range{}, err
	}
	// One probe first, retried for at most probeTimeout (or a step's
	// time, if longer): a TSDB that cannot be read at all is an error, not
	// a range of absent values.
	pctx, cancel := context.WithTimeout(ctx, max(probeTimeout, opts.StepTimeout))
	_, _, err = s.fetch(pctx, from, s.opts.Window+2*s.opts.Interval)
	cancel()
	if err != nil {
		return Range{}, err
	}
	for ; !cursor.After(to); cursor = cursor.Add(opts.Interval) {
		if err := ctx.Err(); err != nil {
			return Range{}, err
		}
		s.Step(ctx)
	}
	if len(s.targets) == 0 {
		return Range{}, errors.New("no engine series with a " + string(LabelTarget) + " label in the range: is this the TSDB that scrapes the engines with the configuration of `ptdmon gen prometheus`?")
	}
	// The points are the ledger's own history of the range: older points
	// lose their per-instance detail first within its InstanceBudget, so
	// a long range at fleet size stays bounded as a live ledger does.
	pts, _ := l.RangeDetail(from.Add(-time.Nanosecond), -1, ledger.Detail{})
	r := Range{Points: pts}
	for _, t := range s.targets {
		r.Targets = append(r.Targets, t.info)
	}
	slices.SortFunc(r.Targets, func(a, b engine.Target) int { return strings.Compare(a.Name, b.Name) })
	return r, nil
}

// rangeQueryTimeout bounds one query of a range read unless Options say.
const rangeQueryTimeout = 30 * time.Second

// probeTimeout bounds the retries of ReadRange's first query.
const probeTimeout = 10 * time.Second

// Range is what ReadRange read: the ledger's points and the targets found.
type Range struct {
	Points  []ledger.Point
	Targets []engine.Target
}
