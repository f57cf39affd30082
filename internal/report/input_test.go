package report

import (
	"strings"
	"testing"
	"time"
)

// TestBuildRefusesPointsOutOfOrder: points that do not advance in time
// (a repeated tick, a reversed range) have no interval to batch or smooth
// by; Build says so instead of dividing by a zero spacing.
func TestBuildRefusesPointsOutOfOrder(t *testing.T) {
	cases := []struct {
		name string
		edit func(i int, t0 time.Time) time.Time
	}{
		{"every tick twice", func(i int, t0 time.Time) time.Time { return t0.Add(time.Duration(i/2) * time.Second) }},
		{"one time", func(_ int, t0 time.Time) time.Time { return t0 }},
		{"newest first", func(i int, t0 time.Time) time.Time { return t0.Add(-time.Duration(i) * time.Second) }},
	}
	for _, c := range cases {
		pts := synthetic(200, func(int) float64 { return 10 })
		t0 := pts[0].Time
		for i := range pts {
			pts[i].Time = c.edit(i, t0)
		}
		_, err := Build(Input{Points: pts}, Options{})
		if err == nil || !strings.Contains(err.Error(), "oldest first") {
			t.Errorf("%s: err %v, want one saying the points must be oldest first", c.name, err)
		}
	}
	// Points in order still make a report.
	if _, err := Build(Input{Points: synthetic(200, func(int) float64 { return 10 })}, Options{}); err != nil {
		t.Errorf("points in order: %v", err)
	}
}

// TestMarkdownWithoutIntervals: a steady span too short for batch means
// leaves the intervals out; the report still renders, saying so.
func TestMarkdownWithoutIntervals(t *testing.T) {
	rate := 9.5e9
	r := Report{KV: KV{BytesPerSecond: &rate}}
	md := r.Markdown()
	if !strings.Contains(string(md), "8.85 GiB/s, 95% CI –;") {
		t.Errorf("KV line without its interval not rendered as expected:\n%s", md)
	}
}
