package tsdbsource

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// TestReadRange reads a past range of the fake TSDB: every point is
// stamped with the range's own time, the rates are those the samples give
// (the decode counter rises 2 per one-second scrape), the prefill restart
// at scrape 7 is a down point, and both targets are found.
func TestReadRange(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	fake := twoEngines(t0)
	srv := httptest.NewServer(fake)
	defer srv.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := ledger.New(ledger.Config{Interval: time.Second, Window: 4 * time.Second, History: 100, Logger: quiet})
	from, to := t0.Add(5300*time.Millisecond), t0.Add(20300*time.Millisecond)
	r, err := ReadRange(context.Background(), l, Options{URL: srv.URL, Interval: time.Second, Window: 4 * time.Second, Logger: quiet}, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 16 {
		t.Fatalf("%d points, want 16 (one a second from %v to %v)", len(r.Points), from, to)
	}
	for i, p := range r.Points {
		if want := from.Add(time.Duration(i) * time.Second); !p.Time.Equal(want) {
			t.Errorf("point %d at %v, want %v", i, p.Time, want)
		}
		if d := p.Decode.Window; !d.OK() || d.V != 2 {
			t.Errorf("point %d: decode windowed %+v, want 2 req/s", i, d)
		}
	}
	// Scrape 7 (t0+7s) was down: the step at t0+7.3s shows the prefill
	// instance down.
	if p := r.Points[2]; p.Prefill.Up != 0 {
		t.Errorf("at %v prefill up %d, want 0 (the scrape at 7s was down)", p.Time, p.Prefill.Up)
	}
	var names []string
	for _, tg := range r.Targets {
		names = append(names, tg.Name+"/"+string(tg.Role))
	}
	if strings.Join(names, ",") != "d0/decode,p0/prefill" {
		t.Errorf("targets %v", names)
	}
}

func TestReadRangeUnreachable(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(&fakeTSDB{down: true})
	defer srv.Close()
	l := ledger.New(ledger.Config{Logger: quiet})
	now := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := ReadRange(ctx, l, Options{URL: srv.URL, Logger: quiet}, now.Add(-time.Minute), now); err == nil {
		t.Fatal("a TSDB answering 503 gave no error")
	}
}

// TestReadRangeSlowTSDB: a TSDB that answers each query later than the
// step interval still gives the range's rates; a past range has no next
// scrape to keep up with, so slowness is never read as an outage.
func TestReadRangeSlowTSDB(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	fake := twoEngines(t0)
	fake.delay = 150 * time.Millisecond
	srv := httptest.NewServer(fake)
	defer srv.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Steps of 100 ms over one-second scrapes: each query answers later
	// than a step's interval.
	const step = 100 * time.Millisecond
	l := ledger.New(ledger.Config{Interval: step, Window: 4 * time.Second, History: 10, Logger: quiet})
	from, to := t0.Add(9300*time.Millisecond), t0.Add(9500*time.Millisecond)
	r, err := ReadRange(context.Background(), l, Options{URL: srv.URL, Interval: step, Window: 4 * time.Second, Logger: quiet}, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 3 {
		t.Fatalf("%d points, want 3", len(r.Points))
	}
	for i, p := range r.Points {
		if d := p.Decode.Window; !d.OK() || d.V != 2 || p.Decode.Up != 1 {
			t.Errorf("point %d: decode windowed %+v, up %d; want 2 req/s from 1 instance up", i, d, p.Decode.Up)
		}
	}
}

// TestReadRangeLongerThanHistory: a range with more steps than the ledger
// keeps is refused before any query, not silently cut.
func TestReadRangeLongerThanHistory(t *testing.T) {
	fake := twoEngines(time.UnixMilli(1_700_000_000_000))
	srv := httptest.NewServer(fake)
	defer srv.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	l := ledger.New(ledger.Config{Interval: time.Second, History: 5, Logger: quiet})
	now := time.Now()
	_, err := ReadRange(context.Background(), l, Options{URL: srv.URL, Interval: time.Second, Logger: quiet}, now.Add(-time.Minute), now)
	if err == nil || !strings.Contains(err.Error(), "keeps 5 points") {
		t.Fatalf("err %v, want the ledger's 5 points named", err)
	}
	if fake.hits != 0 {
		t.Errorf("%d queries before the refusal", fake.hits)
	}
}
