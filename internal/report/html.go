package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/diagnose"
	"github.com/ptdmon/ptdmon/internal/stage"
)

// The HTML report is one file with its styles and charts inline (SVG drawn
// here): no script, font or image is fetched, so it opens from a mail
// attachment.

//go:embed report.html.tmpl
var htmlTemplate string

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":             num,
	"ci":              ci,
	"bytesRate":       bytesRate,
	"bytes":           bytesOf,
	"ms":              ms,
	"stamp":           stamp,
	"ptrf":            func(v float64) *float64 { return &v },
	"numN":            numN,
	"ratio":           ratio,
	"capacityCell":    capacityCell,
	"linkBandwidth":   linkBandwidth,
	"basisCell":       basisCell,
	"utilisationCell": utilisationCell,
	"headroomLine":    headroomLine,
	"pct":             func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"raw": func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'g', -1, 64)
	},
	"join": strings.Join,
}).Parse(htmlTemplate))

// HTML writes the report as one self-contained HTML page.
func (r *Report) HTML() ([]byte, error) {
	var b bytes.Buffer
	data := struct {
		*Report
		Stages   []stageView
		Rates    chart
		KVBytes  chart
		MinShare float64
		Numbers  []keyNum
		NumNote  string
		KVAdvice string
		SLOView  *sloTable
		ByPool   []string
	}{Report: r, MinShare: minOutlierShare, NumNote: numbersNote, SLOView: r.sloView(), ByPool: r.byPoolLines()}
	nums, err := r.numbers()
	if err != nil {
		return nil, err
	}
	data.Numbers = nums
	if r.Advice != nil {
		data.KVAdvice = kvAdviceText(&r.Advice.KV)
	}
	var rates []line
	for _, s := range stage.All {
		data.Stages = append(data.Stages, stageView{Key: string(s), Name: stageTitles[s], Stage: r.Stages.of(s)})
		rates = append(rates, line{string(s), stageTitles[s], r.Series.of(s)})
	}
	data.Rates = r.chart(rates, true)
	data.KVBytes = r.chart([]line{{"kvbytes", "KV bytes/s", r.Series.KVBytes}}, false)
	if err := htmlTmpl.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("report HTML: %w", err)
	}
	return b.Bytes(), nil
}

type stageView struct {
	Key, Name string
	*Stage
}

type line struct {
	key, name string
	v         []*float64
}

// chart is an SVG line chart's geometry, in a 1000×240 viewBox.
type chart struct {
	Lines  []svgLine
	YTicks []tick
	XTicks []tick
	// Steady is the steady span's x extent; Bands the verdict timeline.
	SteadyX, SteadyW float64
	Bands            []band
	Empty            bool
}

type svgLine struct {
	Key, Name string
	Paths     []string // polylines' points, split at gaps
	N         int      // points drawn
}

type tick struct {
	Pos   float64
	Label string
}

type band struct {
	X, W  float64
	Class diagnose.Class
	Title string
}

const (
	chartW, chartH = 1000.0, 240.0
)

func (r *Report) chart(lines []line, verdicts bool) chart {
	var c chart
	ts := r.Series.Time
	if len(ts) == 0 {
		c.Empty = true
		return c
	}
	t0, t1 := float64(ts[0]), float64(ts[len(ts)-1])
	if t1 <= t0 {
		t1 = t0 + 1
	}
	ymax := 0.0
	for _, l := range lines {
		for _, v := range l.v {
			if v != nil && *v > ymax {
				ymax = *v
			}
		}
	}
	if ymax <= 0 {
		ymax = 1
	}
	// Bytes/s ticks step by 1, 2 or 5 of the binary unit they are shown
	// in (2 GiB/s, not 1.86 GiB/s).
	unit, units := 1.0, []string{"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"}
	for !verdicts && ymax/unit >= 1024 && unit < 1<<40 {
		unit *= 1024
		units = units[1:]
	}
	step := niceStep(ymax/unit/4) * unit
	ymax = math.Ceil(ymax/step) * step
	x := func(ms float64) float64 { return (ms - t0) / (t1 - t0) * chartW }
	y := func(v float64) float64 { return chartH - v/ymax*chartH }
	for v := 0.0; v <= ymax+step/2; v += step {
		lab := strconv.FormatFloat(v/unit, 'g', 4, 64)
		if !verdicts {
			lab += " " + units[0]
		}
		c.YTicks = append(c.YTicks, tick{y(v), lab})
	}
	for i := 0; i <= 4; i++ {
		ms := t0 + float64(i)/4*(t1-t0)
		c.XTicks = append(c.XTicks, tick{x(ms), time.UnixMilli(int64(ms)).UTC().Format("15:04:05")})
	}
	for _, l := range lines {
		sl := svgLine{Key: l.key, Name: l.name}
		var cur []string
		flush := func() {
			if len(cur) > 1 {
				sl.Paths = append(sl.Paths, strings.Join(cur, " "))
			}
			cur = nil
		}
		for i, v := range l.v {
			if v == nil {
				flush()
				continue
			}
			cur = append(cur, fmt.Sprintf("%.1f,%.1f", x(float64(ts[i])), y(*v)))
			sl.N++
		}
		flush()
		c.Lines = append(c.Lines, sl)
	}
	c.SteadyX = x(float64(r.Steady.From.UnixMilli()))
	c.SteadyW = x(float64(r.Steady.To.UnixMilli())) - c.SteadyX
	if verdicts {
		for _, s := range r.Verdicts {
			bx := x(float64(s.From.UnixMilli()))
			bw := math.Max(x(float64(s.To.UnixMilli()))-bx, 1)
			c.Bands = append(c.Bands, band{X: bx, W: bw, Class: s.Class,
				Title: fmt.Sprintf("%s to %s: %s", stamp(s.From), stamp(s.To), s.Headline)})
		}
	}
	return c
}

// niceStep rounds x up to 1, 2 or 5 × a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}
