package reqtrace

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// The HTML report is one self-contained file: inline CSS and an inline SVG
// waterfall, no scripts and nothing fetched, so it can be mailed or
// attached to a ticket and still render.

var spanColor = [NumSpans]string{Queue: "#e6a23c", Prefill: "#409eff", KVTransfer: "#b660e0", Decode: "#67c23a"}

type htmlRow struct {
	Label  string
	Y      int
	TextY  int
	E2EW   float64
	Bars   []htmlBar
	Source string
}

type htmlBar struct {
	X, W  float64
	Color string
	Title string
}

type htmlView struct {
	Rep       *Report
	Text      string
	Rows      []htmlRow
	Width     int
	Height    int
	PlotX     int
	PlotW     int
	AxisY     int
	Ticks     []htmlTick
	Legend    []htmlBar
	AxisTextY int
	AxisEnd   int
	HasChart  bool
}

type htmlTick struct {
	X     float64
	Label string
}

const (
	rowH   = 22
	plotX  = 240
	plotW  = 760
	topPad = 10
)

func waterfall(rep *Report) htmlView {
	v := htmlView{Rep: rep, PlotX: plotX, PlotW: plotW, Width: plotX + plotW + 20}
	maxT := 0.0
	for _, q := range rep.Slowest {
		maxT = max(maxT, q.Spans[E2E].Seconds)
		for _, s := range q.Segments {
			maxT = max(maxT, s.End)
		}
	}
	if maxT <= 0 {
		return v
	}
	scale := float64(plotW) / maxT
	for i, q := range rep.Slowest {
		y := topPad + i*rowH
		row := htmlRow{Label: fmt.Sprintf("%s  %s ms", idText(q.ID), ms(q.Spans[E2E].Seconds)),
			Y: y, TextY: y + 15, E2EW: q.Spans[E2E].Seconds * scale, Source: q.Pos.String()}
		for _, s := range q.Segments {
			row.Bars = append(row.Bars, htmlBar{X: plotX + s.Start*scale, W: max((s.End-s.Start)*scale, 1),
				Color: spanColor[s.Span], Title: fmt.Sprintf("%s %s ms", s.Span, ms(s.End-s.Start))})
		}
		v.Rows = append(v.Rows, row)
	}
	v.AxisY = topPad + len(rep.Slowest)*rowH + 4
	v.AxisTextY = v.AxisY + 14
	v.AxisEnd = plotX + plotW
	v.Height = v.AxisY + 24
	for i := 0; i <= 4; i++ {
		t := maxT * float64(i) / 4
		v.Ticks = append(v.Ticks, htmlTick{X: plotX + t*scale, Label: ms(t) + " ms"})
	}
	for _, s := range []Span{Queue, Prefill, KVTransfer, Decode} {
		v.Legend = append(v.Legend, htmlBar{Color: spanColor[s], Title: s.String()})
	}
	v.HasChart = true
	return v
}

var htmlTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>ptdmon requests</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:12px}
svg text{font:11px monospace}
.legend span{display:inline-block;margin-right:1em}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
</style></head><body>
<h1>ptdmon requests — {{len .Rep.Requests}} requests</h1>
<h2>Slowest requests (waterfall, time from disagg arrival)</h2>
{{if .HasChart}}
<p class="legend">{{range .Legend}}<span><i style="background:{{.Color}}"></i>{{.Title}}</span>{{end}}<span><i style="background:#ddd"></i>e2e</span></p>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" role="img" aria-label="waterfall of the slowest requests">
{{range .Ticks}}<line x1="{{printf "%.2f" .X}}" y1="{{$.AxisY}}" x2="{{printf "%.2f" .X}}" y2="4" stroke="#eee"/><text x="{{printf "%.2f" .X}}" y="{{$.AxisTextY}}" text-anchor="middle">{{.Label}}</text>
{{end}}{{range $r := .Rows}}<g><title>{{$r.Source}}</title>
<text x="4" y="{{$r.TextY}}">{{$r.Label}}</text>
<rect x="{{$.PlotX}}" y="{{$r.Y}}" width="{{printf "%.2f" $r.E2EW}}" height="18" fill="#ddd"/>
{{range $r.Bars}}<rect x="{{printf "%.2f" .X}}" y="{{$r.Y}}" width="{{printf "%.2f" .W}}" height="18" fill="{{.Color}}"><title>{{.Title}}</title></rect>
{{end}}</g>
{{end}}<line x1="{{.PlotX}}" y1="{{.AxisY}}" x2="{{.AxisEnd}}" y2="{{.AxisY}}" stroke="#888"/>
</svg>
{{else}}<p>No request has a trusted e2e, so there is nothing to draw. See the missing reasons below.</p>{{end}}
<h2>Report</h2>
<pre>{{.Text}}</pre>
</body></html>
`))

// WriteHTML renders a self-contained HTML report: the waterfall of the
// slowest requests and the text report.
func WriteHTML(w io.Writer, rep *Report) error {
	v := waterfall(rep)
	var sb strings.Builder
	if err := WriteText(&sb, rep); err != nil {
		return fmt.Errorf("render HTML report text: %w", err)
	}
	v.Text = sb.String()
	if err := htmlTmpl.Execute(w, v); err != nil {
		return fmt.Errorf("write HTML report: %w", err)
	}
	return nil
}
