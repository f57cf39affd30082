package reqtrace

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// ms formats seconds as milliseconds; the unit is in the column header.
func ms(s float64) string { return strconv.FormatFloat(s*1e3, 'f', 3, 64) }

// cell is a span as a table cell: missing is "-", never 0.
func cell(v Value) string {
	if !v.OK {
		return "-"
	}
	return ms(v.Seconds)
}

// WriteText renders the report as plain-text tables.
func WriteText(w io.Writer, rep *Report) error {
	ew := &errWriter{w: w}
	n := len(rep.Requests)
	ew.printf("ptdmon requests: %d requests from %d file(s)\n", n, len(rep.Inputs))
	for _, in := range rep.Inputs {
		ew.printf("  %s: %d lines, %d records, %d skipped\n", in.Name, in.Lines, in.Records, in.Skipped)
	}
	if len(rep.Skipped) > 0 {
		ew.printf("skipped lines (%d):\n", len(rep.Skipped))
		for _, e := range rep.Skipped {
			ew.printf("  %s\n", e.Error())
		}
	}
	ew.printf("formats: %s\n", formats(rep.Formats))
	if rep.Duplicates > 0 || rep.Covered > 0 {
		ew.printf("not counted: %d duplicate ids, %d worker records of requests that have a disagg record\n", rep.Duplicates, rep.Covered)
	}
	writeClocks(ew, rep)

	ew.printf("\nphase distributions (ms, nearest-rank percentiles):\n")
	tw := tabwriter.NewWriter(ew, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tcount\tmissing\tp50\tp90\tp99\tmax\tmean\t")
	for _, d := range rep.Dist {
		if d.Count == 0 {
			fmt.Fprintf(tw, "%s\t%d\t%d\t-\t-\t-\t-\t-\t\n", d.Span, d.Count, d.Missing)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", d.Span, d.Count, d.Missing,
			ms(d.P50), ms(d.P90), ms(d.P99), ms(d.Max), ms(d.Mean))
	}
	ew.err = firstErr(ew.err, tw.Flush())
	anyMissing := false
	for _, d := range rep.Dist {
		for _, rc := range d.MissingBy {
			if !anyMissing {
				ew.printf("missing spans (never shown as 0):\n")
				anyMissing = true
			}
			ew.printf("  %-12s %7d  %s\n", d.Span, rc.Count, rc.Reason)
		}
	}

	ew.printf("\nshare of e2e (sum of phase / sum of e2e over requests with both):\n")
	for _, s := range rep.Shares {
		if s.Missing != "" {
			ew.printf("  %-12s      -  (%s)\n", s.Name, s.Missing)
			continue
		}
		ew.printf("  %-12s %5.1f%%  (%d requests)\n", s.Name, 100*s.Fraction, s.Requests)
	}

	ew.printf("\nslowest %d requests by e2e (ms):\n", len(rep.Slowest))
	if len(rep.Slowest) == 0 {
		ew.printf("  none: no request has a trusted e2e\n")
		return ew.err
	}
	tw = tabwriter.NewWriter(ew, 2, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\te2e\tttft\tqueue\tprefill\tkv_transfer\tdecode\ttpot\tsource")
	for _, q := range rep.Slowest {
		sp := q.Spans
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", idText(q.ID), cell(sp[E2E]), cell(sp[TTFT]),
			cell(sp[Queue]), cell(sp[Prefill]), cell(sp[KVTransfer]), cell(sp[Decode]), cell(sp[TPOT]), q.Pos)
	}
	ew.err = firstErr(ew.err, tw.Flush())
	return ew.err
}

func writeClocks(ew *errWriter, rep *Report) {
	if rep.Clocks == nil {
		ew.printf("clock sync: none given; ctx/gen times used as recorded\n")
	} else {
		ref := rep.Clocks.Reference
		if ref == "" {
			ref = "disagg server"
		}
		ew.printf("clock sync (reference: %s; aligned = worker time - offset):\n", ref)
		for _, e := range rep.Clocks.Estimates {
			if !e.Usable {
				ew.printf("  %s: no usable probe (%d invalid); times used as recorded\n", e.Server, e.Invalid)
				continue
			}
			ew.printf("  %s: offset %+.9f s ± %.9f s (delay %.9f s, least-delay of %d probe(s), %d invalid)\n",
				e.Server, e.Offset, e.Uncertainty, e.Delay, e.Probes, e.Invalid)
		}
		if len(rep.Unprobed) > 0 {
			ew.printf("  no probes, times used as recorded: %s\n", strings.Join(rep.Unprobed, ", "))
		}
	}
	if rep.ClockBroken > 0 {
		ew.printf("causal chain broken across clocks in %d requests: their e2e/decode are missing\n", rep.ClockBroken)
	}
}

func idText(id ID) string {
	if id == "" {
		return "(no id)"
	}
	return string(id)
}

func formats(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// errWriter keeps the first write error so rendering code stays linear.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
