package report

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"

	"github.com/ptdmon/ptdmon/internal/benchresult"
)

// ClientDiff is the two runs' client views side by side. The tools give
// summaries, not batch means, so a difference is shown, not tested.
type ClientDiff struct {
	Tools  [2]string   `json:"tools"`
	Rows   []ClientRow `json:"rows"`
	Absent string      `json:"absent,omitempty"`
}

// ClientRow is one client figure in both runs; Diff is B − A, Relative
// (B − A) ÷ A.
type ClientRow struct {
	What     string      `json:"what"`
	Values   [2]*float64 `json:"values"`
	Diff     *float64    `json:"difference"`
	Relative *float64    `json:"relative_difference"`
}

// clientDiff compares the client views; nil when neither run has one.
func clientDiff(a, b *Report) *ClientDiff {
	if a.Client == nil && b.Client == nil {
		return nil
	}
	d := &ClientDiff{}
	views := [2]*Client{a.Client, b.Client}
	for i, c := range views {
		if c == nil {
			d.Tools[i] = "–"
			d.Absent = "one run has no benchmark result"
			continue
		}
		d.Tools[i] = c.Tool
	}
	count := func(v *int) *float64 {
		if v == nil {
			return nil
		}
		return ptr(float64(*v))
	}
	type fig struct {
		what string
		get  func(*Client) *float64
	}
	dist := func(name string, get func(*Client) benchresult.Dist) []fig {
		return []fig{
			{name + " p50 (s)", func(c *Client) *float64 { return get(c).P50 }},
			{name + " p99 (s)", func(c *Client) *float64 { return get(c).P99 }},
		}
	}
	figs := []fig{
		{"completed", func(c *Client) *float64 { return count(c.Completed) }},
		{"failed", func(c *Client) *float64 { return count(c.Failed) }},
		{"request rate (req/s)", func(c *Client) *float64 { return c.RequestRate }},
		{"output tokens/s", func(c *Client) *float64 { return c.OutputTPS }},
		{"goodput (req/s)", func(c *Client) *float64 { return c.Goodput }},
	}
	figs = append(figs, dist("TTFT", func(c *Client) benchresult.Dist { return c.TTFT })...)
	figs = append(figs, dist("ITL", func(c *Client) benchresult.Dist { return c.ITL })...)
	figs = append(figs, dist("E2E", func(c *Client) benchresult.Dist { return c.E2E })...)
	for _, f := range figs {
		row := ClientRow{What: f.what}
		for i, c := range views {
			if c != nil {
				row.Values[i] = f.get(c)
			}
		}
		if x, y := row.Values[0], row.Values[1]; x != nil && y != nil {
			row.Diff = ptr(*y - *x)
			if *x != 0 {
				row.Relative = ptr(*row.Diff / *x)
			}
		}
		d.Rows = append(d.Rows, row)
	}
	return d
}

func (r ClientRow) cells() [5]string {
	rel := "–"
	if r.Relative != nil {
		rel = fmt.Sprintf("%+.1f%%", 100**r.Relative)
	}
	diff := "–"
	if r.Diff != nil {
		diff = fmt.Sprintf("%+.3g", *r.Diff)
	}
	return [5]string{r.What, num(r.Values[0], ""), num(r.Values[1], ""), diff, rel}
}

const clientDiffNote = "The tools give summaries, not batch means: differences are shown, not tested."

func (c *Comparison) clientMarkdown(b *bytes.Buffer) {
	d := c.Client
	if d == nil {
		return
	}
	fmt.Fprintf(b, "\n## The load generators' view\n\nA: %s; B: %s.", d.Tools[0], d.Tools[1])
	if d.Absent != "" {
		fmt.Fprintf(b, " %s.", d.Absent)
	}
	fmt.Fprintf(b, " %s\n\n| figure | A | B | B − A | relative |\n|---|---|---|---|---|\n", clientDiffNote)
	for _, r := range d.Rows {
		cells := r.cells()
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells[:], " | "))
	}
}

var clientDiffTmpl = template.Must(template.New("clientdiff").Parse(`<h2>The load generators' view</h2>
<p>A: {{index .D.Tools 0}}; B: {{index .D.Tools 1}}.{{with .D.Absent}} <span class="muted">{{.}}.</span>{{end}} <span class="muted">{{.Note}}</span></p>
<table id="client"><tr><th>figure</th><th>A</th><th>B</th><th>B − A</th><th>relative</th></tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>
`))

// ClientHTML is the client comparison's section of the HTML page.
func (c *Comparison) ClientHTML() (template.HTML, error) {
	if c.Client == nil {
		return "", nil
	}
	var rows [][5]string
	for _, r := range c.Client.Rows {
		rows = append(rows, r.cells())
	}
	var b bytes.Buffer
	if err := clientDiffTmpl.Execute(&b, struct {
		D    *ClientDiff
		Note string
		Rows [][5]string
	}{c.Client, clientDiffNote, rows}); err != nil {
		return "", fmt.Errorf("comparison HTML: %w", err)
	}
	return template.HTML(b.String()), nil //nolint:gosec // built by html/template above
}
