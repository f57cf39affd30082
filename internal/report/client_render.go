package report

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"

	"github.com/ptdmon/ptdmon/internal/benchresult"
)

// clientRows are the client view's figures as label and value, the same
// rows in Markdown and HTML.
func (c *Client) rows() [][2]string {
	absent := func(key string) string {
		if why := c.Absent[key]; why != "" {
			return "– (" + why + ")"
		}
		return "–"
	}
	val := func(v *float64, unit, key string) string {
		if v == nil {
			return absent(key)
		}
		return fmt.Sprintf("%.4g%s", *v, unit)
	}
	count := func(v *int, key string) string {
		if v == nil {
			return absent(key)
		}
		return fmt.Sprint(*v)
	}
	dist := func(d benchresult.Dist, key string) string {
		if d == (benchresult.Dist{}) {
			return absent(key)
		}
		return fmt.Sprintf("mean %s, p50 %s, p90 %s, p95 %s, p99 %s", num(d.Mean, " s"), num(d.P50, " s"),
			num(d.P90, " s"), num(d.P95, " s"), num(d.P99, " s"))
	}
	failed := count(c.Failed, "failed")
	if len(c.FailedKind) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(c.FailedKind)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, c.FailedKind[k]))
		}
		failed += " (" + strings.Join(kinds, ", ") + ")"
	}
	p := c.Placement
	where := p.Method + ": " + p.Why
	if p.Placed() {
		where = fmt.Sprintf("%s to %s, %s", stamp(p.From), stamp(p.To), where)
	}
	file := c.File
	if file == "" {
		file = "–"
	}
	rows := [][2]string{
		{"tool", fmt.Sprintf("%s (%s, %s clock)", c.Tool, c.Format, c.Clock)},
		{"file", file},
		{"placed", where},
		{"benchmark length", val(c.Duration, " s", "duration_seconds")},
		{"completed", count(c.Completed, "completed")},
		{"failed", failed},
		{"request rate", val(c.RequestRate, " req/s", "request_rate")},
		{"output tokens/s", val(c.OutputTPS, "", "output_tokens_per_second")},
		{"goodput", val(c.Goodput, " req/s", "goodput_requests_per_second")},
		{"TTFT", dist(c.TTFT, "ttft_seconds")},
		{"ITL", dist(c.ITL, "itl_seconds")},
		{"E2E latency", dist(c.E2E, "e2e_seconds")},
	}
	if j := c.Join; j != nil {
		v := fmt.Sprintf("%d of %d requests with an id (%d traced)", j.Joined, j.Requests, j.Traced)
		if j.Why != "" {
			v += ": " + j.Why
		}
		rows = append(rows, [2]string{"joined with traces", v},
			[2]string{"TTFT outside the engines", dist(j.TTFTOutside, "")},
			[2]string{"arrival delay", dist(j.ArrivalDelay, "")})
	}
	if why := c.Absent["earlier_runs"]; why != "" {
		rows = append(rows, [2]string{"note", why})
	}
	return rows
}

// checkRow is a check as table cells: what, client, server, tolerance,
// verdict, source or why.
func (ck Check) row() [6]string {
	verdict := "within noise"
	switch {
	case ck.Client == nil || ck.Server == nil || ck.Tolerance == nil:
		verdict = "not compared"
	case ck.Beyond:
		verdict = "**beyond noise**"
	}
	tol := "–"
	if ck.Tolerance != nil {
		tol = fmt.Sprintf("%.3g", *ck.Tolerance)
		if ck.What != "completions" {
			tol = fmt.Sprintf("%.0f%%", 100**ck.Tolerance)
		}
	}
	note := ck.Source
	if ck.Why != "" {
		note = ck.Why
	}
	return [6]string{ck.What, num(ck.Client, ""), num(ck.Server, ""), tol, verdict, note}
}

func (r *Report) clientMarkdown(b *bytes.Buffer) {
	c := r.Client
	if c == nil {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## The load generator's view\n\n| | |\n|---|---|\n")
	for _, row := range c.rows() {
		p("| %s | %s |\n", row[0], strings.ReplaceAll(row[1], "|", "\\|"))
	}
	p("\nClient against server over the benchmark's span:\n\n| figure | client | server | tolerance | | server side |\n|---|---|---|---|---|---|\n")
	for _, ck := range c.Checks {
		cells := ck.row()
		p("| %s |\n", strings.Join(cells[:], " | "))
	}
}

var clientTmpl = template.Must(template.New("client").Parse(`<style>td.beyond{font-weight:600;color:#b3261e}</style>
<h2>The load generator's view</h2>
<table><tbody>{{range .Rows}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</tbody></table>
<p>Client against server over the benchmark's span:</p>
<table><thead><tr><th>figure</th><th>client</th><th>server</th><th>tolerance</th><th></th><th>server side</th></tr></thead><tbody>
{{range .Checks}}<tr>{{range $i, $c := .}}<td{{if eq $c "**beyond noise**"}} class="beyond"{{end}}>{{$c}}</td>{{end}}</tr>{{end}}</tbody></table>
`))

// ClientHTML is the client view's section of the HTML page ("" without a
// benchmark result).
func (r *Report) ClientHTML() (template.HTML, error) {
	c := r.Client
	if c == nil {
		return "", nil
	}
	var checks [][6]string
	for _, ck := range c.Checks {
		row := ck.row()
		checks = append(checks, row)
	}
	var b bytes.Buffer
	if err := clientTmpl.Execute(&b, struct {
		Rows   [][2]string
		Checks [][6]string
	}{c.rows(), checks}); err != nil {
		return "", fmt.Errorf("report HTML: %w", err)
	}
	return template.HTML(strings.ReplaceAll(b.String(), "**beyond noise**", "beyond noise")), nil //nolint:gosec // built by html/template above
}
