package journey

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteText writes a summary of recs: how many were joined, each phase's
// percentiles over the requests that have it, and the top slowest.
func WriteText(w io.Writer, recs []Record, top int) error {
	var joined, prefillOnly, decodeOnly, inferred int
	for i := range recs {
		switch recs[i].Legs {
		case "prefill+decode":
			joined++
		case "prefill":
			prefillOnly++
		default:
			decodeOnly++
		}
		for _, iv := range recs[i].Waterfall {
			if iv.Inferred {
				inferred++
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%d requests: %d joined across prefill and decode, %d prefill leg only, %d decode or single leg only; KV transfer inferred for %d\n\n",
		len(recs), joined, prefillOnly, decodeOnly, inferred)
	fmt.Fprintln(tw, "phase\trequests\tp50 s\tp90 s\tp99 s\tmax s\t")
	for _, ph := range Phases {
		var v []float64
		for i := range recs {
			if d, ok := recs[i].Phase(ph); ok {
				v = append(v, d)
			}
		}
		if len(v) == 0 {
			fmt.Fprintf(tw, "%s\t0\t–\t–\t–\t–\t\n", ph)
			continue
		}
		slices.Sort(v)
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t\n", ph, len(v), pct(v, 0.5), pct(v, 0.9), pct(v, 0.99), v[len(v)-1])
	}
	if top > 0 && len(recs) > 0 {
		page := Select(append([]Record(nil), recs...), Query{Sort: SortSlowest, Limit: top})
		fmt.Fprintf(tw, "\nslowest %d\n", len(page.Records))
		fmt.Fprintln(tw, "id\te2e s\t"+phaseHeader()+"legs\t")
		for i := range page.Records {
			r := &page.Records[i]
			cells := []string{r.ID, secs(r.E2E)}
			for _, ph := range Phases {
				if d, ok := r.Phase(ph); ok {
					cells = append(cells, fmt.Sprintf("%.3f", d))
				} else {
					cells = append(cells, "–")
				}
			}
			cells = append(cells, r.Legs)
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func phaseHeader() string {
	var b strings.Builder
	for _, ph := range Phases {
		b.WriteString(string(ph) + "\t")
	}
	return b.String()
}

func secs(v float64) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", v)
}

// pct is the nearest-rank percentile of sorted v.
func pct(v []float64, q float64) float64 {
	i := int(q*float64(len(v))+0.999999) - 1
	return v[min(max(i, 0), len(v)-1)]
}
