package diagnose

import (
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// When failures change the picture (docs/web.md#the-verdict). Failed KV
// transfers carry no bytes, so KV trails prefill; a failed load that decode
// recomputes is prefill work on decode, so decode falls behind: either way
// the stage looks slow when it is failing. Above these shares the verdict
// names the failures.
const (
	// failureNoteMin: a failure class at or above this share of the
	// transfers attempted, averaged over the window, is a note.
	failureNoteMin = 0.01
	// failureHeadlineMin: failures (all classes) or recompute on decode at
	// or above this share make the headline of a KV- or decode-bound
	// verdict name them.
	failureHeadlineMin = 0.05
)

// failureMeans are a group's failure shares averaged over the window's
// points that have them.
type failureMeans struct {
	ratio, rate [len(failureKinds)]float64
	n           [len(failureKinds)]int
}

// failureKinds are ledger.FailureKinds, fixed in size for the arrays.
var failureKinds = [8]ledger.FailureKind(ledger.FailureKinds)

func meanFailures(w []ledger.Point) failureMeans {
	var m failureMeans
	for i := range w {
		// A group's points carry its one pool; a deployment of several
		// pools is judged group by group.
		if len(w[i].Pools) != 1 {
			continue
		}
		f := &w[i].Pools[0].Failures
		for k, kind := range failureKinds {
			r := f.Kind(kind)
			if r.Ratio.OK() && r.PerSecond.OK() {
				m.ratio[k] += r.Ratio.V
				m.rate[k] += r.PerSecond.V
				m.n[k]++
			}
		}
	}
	for k := range failureKinds {
		if m.n[k] > 0 {
			m.ratio[k] /= float64(m.n[k])
			m.rate[k] /= float64(m.n[k])
		}
	}
	return m
}

// noteFailures adds what failures did over the window to v: a note per
// class above failureNoteMin, one for recompute on decode, and, where a
// KV- or decode-bound verdict rests on failures, a headline that names
// them rather than calling the stage slow.
func noteFailures(v *Verdict, w []ledger.Point) {
	m := meanFailures(w)
	var classes []string
	total := 0.0
	recompute, shed, shedRate, migrated, migratedRate := -1.0, -1.0, 0.0, -1.0, 0.0
	for k, kind := range failureKinds {
		if m.n[k] == 0 {
			continue
		}
		switch kind {
		case ledger.KindRecomputed:
			recompute = m.ratio[k]
			continue
		case ledger.KindShed:
			shed, shedRate = m.ratio[k], m.rate[k]
			continue
		case ledger.KindMigrated:
			migrated, migratedRate = m.ratio[k], m.rate[k]
			continue
		}
		inTotal := kind.InTotal()
		if inTotal {
			total += m.ratio[k]
		}
		if m.ratio[k] >= failureNoteMin {
			c := fmt.Sprintf("%s %s (%.2g/s)", kind, pct(m.ratio[k]), m.rate[k])
			if !inTotal {
				// vLLM's NIXL counts them within network too (PR #55854).
				c = fmt.Sprintf("lost notifications %s (%.2g/s, not added: NIXL counts them within network too)", pct(m.ratio[k]), m.rate[k])
			}
			classes = append(classes, c)
		}
	}
	failed := ""
	if len(classes) > 0 {
		failed = strings.Join(classes, ", ")
		v.Notes = append(v.Notes, fmt.Sprintf("KV transfers failed over the window: %s of those attempted; failed transfers move no KV, so KV req/s trails prefill by them", failed))
	}
	recomputing := recompute >= failureHeadlineMin
	if recomputing {
		why := "after failed KV loads or for requests that skipped prefill"
		if failed != "" {
			why = "after failed KV loads (" + failed + ")"
		}
		v.Notes = append(v.Notes, fmt.Sprintf("%s of the prompt tokens decode processed were recomputed on decode %s: decode is doing prefill work", pct(recompute), why))
	}
	defer noteOffered(v, migrated, migratedRate, migratedOf, migratedNote, migratedHeadline)
	defer noteOffered(v, shed, shedRate, shedOf, shedNote, shedHeadline)
	switch {
	case v.Class == DecodeBound && recomputing && failed != "":
		v.Headline = fmt.Sprintf("Decode-bound by failed KV loads: %s of decode's prompt tokens were recomputed on decode", pct(recompute))
	case v.Class == DecodeBound && recomputing:
		v.Headline = fmt.Sprintf("Decode-bound by prefill work on decode: %s of its prompt tokens were computed on decode", pct(recompute))
	case v.Class == KVBound && total >= failureHeadlineMin:
		v.Headline = fmt.Sprintf("KV transfers failing: %s of those attempted failed (%s)", pct(total), failed)
	case v.Class == Insufficient:
	case total >= failureHeadlineMin && recomputing:
		v.Headline += fmt.Sprintf(", while %s of KV loads fail and decode recomputes them", pct(total))
	case total >= failureHeadlineMin:
		v.Headline += fmt.Sprintf(", while %s of KV transfers fail", pct(total))
	case recomputing:
		v.Headline += fmt.Sprintf(", while decode computes %s of its prompt tokens itself", pct(recompute))
	}
}

// Requests counted beside the served ones, as shares: what the note says
// of the share and after its rate, and what the headline says after it.
const (
	// Stage rates count only the admitted requests, so a pool that sheds
	// looks as if it kept up with its arrivals while it turns them away
	// (docs/design.md#load-shed-before-the-engine). A share of the offered
	// load, served + shed.
	shedOf       = "of offered load"
	shedNote     = "was shed before the engine by a router or an engine's admission limit: arrivals are the requests served plus these, and the stage rates count only the first"
	shedHeadline = "of offered load shed before the engine"
	// The engines count each attempt of a request a router sent again, so
	// the stages do more work than the requests served
	// (docs/design.md#requests-sent-again). A share of the requests sent
	// to workers, served + sent again.
	migratedOf       = "of the requests sent to workers"
	migratedNote     = "were sent again after their worker was lost or failed them (a router's migrations or retries): the engines count each attempt, so the stage rates run above the requests served by these"
	migratedHeadline = "of requests sent again after a worker was lost"
)

// noteOffered adds a share to v: a note at or above failureNoteMin, the
// headline's too at or above failureHeadlineMin.
func noteOffered(v *Verdict, share, rate float64, of, note, headline string) {
	if share < failureNoteMin {
		return
	}
	v.Notes = append(v.Notes, fmt.Sprintf("%s %s (%.2g req/s) %s", pct(share), of, rate, note))
	if share >= failureHeadlineMin && v.Class != Insufficient {
		v.Headline += fmt.Sprintf("; %s %s", pct(share), headline)
	}
}

// pct writes a share as a percentage: 12%, 4.5%.
func pct(r float64) string {
	if r >= 0.095 {
		return fmt.Sprintf("%.0f%%", 100*r)
	}
	return fmt.Sprintf("%.1f%%", 100*r)
}
