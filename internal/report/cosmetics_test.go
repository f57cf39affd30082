package report

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// The KV chart's ticks are round numbers of the one binary unit the axis
// is shown in.
func TestBytesTicksAreRound(t *testing.T) {
	f := func(peak float64, want ...string) {
		t.Helper()
		r := &Report{Series: Series{Time: []int64{0, 1000}}}
		c := r.chart([]line{{"kvbytes", "KV bytes/s", []*float64{ptr(0), ptr(peak)}}}, false)
		var got []string
		for _, tk := range c.YTicks {
			got = append(got, tk.Label)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("peak %g B/s: ticks %q, want %q", peak, got, want)
		}
	}
	f(7.45*(1<<30), "0 GiB/s", "2 GiB/s", "4 GiB/s", "6 GiB/s", "8 GiB/s")
	f(900*(1<<20), "0 MiB/s", "500 MiB/s", "1000 MiB/s")
	f(3000, "0 KiB/s", "1 KiB/s", "2 KiB/s", "3 KiB/s")
	f(40, "0 B/s", "10 B/s", "20 B/s", "30 B/s", "40 B/s")
}

// A span too short for intervals says why once, not in every cell of the
// stages and the pools.
func TestShortSpanSaysWhyOnce(t *testing.T) {
	in, _ := simInput(t, "balanced", 3, 40*time.Second, nil)
	r, err := Build(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Pools) < 2 {
		t.Fatalf("want two pools, got %d", len(r.Pools))
	}
	h, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for format, out := range map[string]string{"md": string(r.Markdown()), "html": string(h)} {
		if n := strings.Count(out, "too short for an interval"); n != 1 {
			t.Errorf("%s: the reason for no interval appears %d times, want once:\n%s", format, n, out)
		}
	}
}
