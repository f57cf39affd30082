package reqtrace

import "slices"

// Options tune a report.
type Options struct {
	// Top is how many of the slowest requests to list.
	Top int
}

// InputSummary is what one input file contributed.
type InputSummary struct {
	Name    string `json:"file"`
	Lines   int    `json:"lines"`
	Records int    `json:"records"`
	Skipped int    `json:"skipped"`
}

// Report is everything the renderers show.
type Report struct {
	Inputs  []InputSummary
	Skipped []LineError
	// Formats counts records by kind and generation, e.g. "disagg/C".
	Formats map[string]int
	Clocks  *ClockSync
	// Unprobed lists servers named in records for which no clock estimate
	// exists while a clock-sync input was given: their times are used as
	// recorded.
	Unprobed []string
	// Duplicates are records whose id was already seen (same kind); only
	// the first is kept. Covered are worker records of a request that also
	// has a disagg record, dropped so no request is counted twice.
	Duplicates int
	Covered    int
	// ClockBroken counts requests with a causal-chain break across clocks.
	ClockBroken int
	Requests    []Request // in input order: files as given, then lines
	Dist        [NumSpans]Distribution
	Shares      []Share
	Slowest     []Request
}

// Build turns parsed files into a report. It is pure: same inputs, same
// report, whatever the order of lines within the files.
func Build(files []FileResult, cs *ClockSync, u Usage, opt Options) *Report {
	rep := &Report{Formats: map[string]int{}, Clocks: cs}
	disaggIDs := map[ID]bool{}
	total := 0
	for _, f := range files {
		total += len(f.Records)
		rep.Inputs = append(rep.Inputs, InputSummary{f.Name, f.Lines, len(f.Records), len(f.Skipped)})
		rep.Skipped = append(rep.Skipped, f.Skipped...)
		for i := range f.Records {
			if r := &f.Records[i]; r.Kind == KindDisagg && r.ID != "" {
				disaggIDs[r.ID] = true
			}
		}
	}
	rep.Requests = make([]Request, 0, total)
	seen := map[[2]string]bool{}
	servers := map[string]bool{}
	for _, f := range files {
		for _, r := range f.Records {
			if r.ID != "" {
				key := [2]string{r.Kind.String(), string(r.ID)}
				if r.Kind == KindWorker && disaggIDs[r.ID] {
					rep.Covered++
					continue
				}
				if seen[key] {
					rep.Duplicates++
					continue
				}
				seen[key] = true
			}
			rep.Formats[r.Kind.String()+"/"+string(r.Gen)]++
			for _, p := range []Phase{r.Ctx, r.GenPhase} {
				if p.Present && p.Server != "" {
					servers[p.Server] = true
				}
			}
			q := Compute(r, cs, u)
			if _, bad := firstCross(q.Violations); bad {
				rep.ClockBroken++
			}
			rep.Requests = append(rep.Requests, q)
		}
	}
	if cs != nil {
		for s := range servers {
			if _, ok := cs.Lookup(s); !ok {
				rep.Unprobed = append(rep.Unprobed, s)
			}
		}
		slices.Sort(rep.Unprobed)
	}
	rep.Dist = Distribute(rep.Requests)
	rep.Shares = Shares(rep.Requests)
	rep.Slowest = Slowest(rep.Requests, opt.Top)
	return rep
}
