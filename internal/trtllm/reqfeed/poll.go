package reqfeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

// MaxBodyBytes bounds one /perf_metrics answer; a larger one is refused.
const MaxBodyBytes = reqtrace.MaxLineBytes

// Poller reads one server's GET /perf_metrics into a ledger.
type Poller struct {
	// URL is the server's /perf_metrics, e.g. http://disagg:8000/perf_metrics.
	URL string
	// Files, when set instead of URL, is a glob of the JSONL files the
	// server writes (current servers have no /perf_metrics), e.g.
	// /var/log/trtllm/perf_metrics-disagg-*.jsonl.
	Files string
	// Pool names the pool of the requests (the book's ?pool=).
	Pool   string
	Client *http.Client
	Book   *journey.Book
	Logger *slog.Logger
	// Now is the wall clock (time.Now when nil).
	Now func() time.Time

	mu    sync.Mutex
	clk   clock
	polls int
	tails map[string]*tail
	// n is read by Stats without mu: /metrics must not wait on a poll.
	n struct{ polls, errors, records, skipped atomic.Int64 }
}

// Stats count what the poller did.
type Stats struct {
	Polls, Errors, Records, Skipped int64
}

// Stats returns the counts so far.
func (p *Poller) Stats() Stats {
	return Stats{Polls: p.n.polls.Load(), Errors: p.n.errors.Load(), Records: p.n.records.Load(), Skipped: p.n.skipped.Load()}
}

// Run polls every interval until ctx ends.
func (p *Poller) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last := ""
	for {
		// A failing source is logged when its error changes, not every poll.
		// A server that accepts and never answers must not stop the polling:
		// each poll has the interval (at least 5 s) to finish.
		pctx, cancel := context.WithTimeout(ctx, max(interval, 5*time.Second))
		err := p.Poll(pctx)
		cancel()
		switch {
		case ctx.Err() != nil:
		case err != nil && err.Error() != last:
			last = err.Error()
			p.logger().Warn("TensorRT-LLM perf metrics", "url", p.URL, "files", p.Files, "err", err)
		case err == nil && last != "":
			last = ""
			p.logger().Info("TensorRT-LLM perf metrics read again", "url", p.URL, "files", p.Files)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Poll reads the records completed since the last poll and files them.
// The endpoint forgets what it answered, so records of a failed read are
// lost; nothing is filed twice.
func (p *Poller) Poll(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n.polls.Add(1)
	p.polls++
	if p.Files != "" {
		return p.pollFiles()
	}
	p.probe(ctx)
	body, err := p.get(ctx, p.URL)
	d := seconds(p.now())
	if err != nil {
		p.n.errors.Add(1)
		return err
	}
	recs, err := reqtrace.ParseLine(body, reqtrace.Pos{File: p.URL, Line: p.polls})
	if err != nil {
		p.n.errors.Add(1)
		return fmt.Errorf("parse %s: %w", p.URL, err)
	}
	return p.file(recs, d, instanceOf(p.URL))
}

// file places recs, read at wall time d, on the wall clock and files them.
func (p *Poller) file(recs []reqtrace.Record, d float64, inst string) error {
	for i := range recs {
		p.clk.bound(lastInstant(&recs[i]), d)
	}
	if len(recs) > 0 && !p.clk.known {
		p.n.skipped.Add(int64(len(recs)))
		p.n.errors.Add(1)
		return errors.New("no time in the records to place them on the wall clock")
	}
	out := make([]journey.Record, 0, len(recs))
	for i := range recs {
		q := reqtrace.Compute(recs[i], nil, nil)
		out = append(out, Record(&q, &recs[i], p.Pool, inst, p.clk.wall))
	}
	p.n.records.Add(int64(len(out)))
	p.Book.AddRecords(out, 2)
	return nil
}

// probe asks the server's steady clock (GET /steady_clock_offset); a
// server without the endpoint leaves the clock to the records' bound.
func (p *Poller) probe(ctx context.Context) {
	u, err := url.Parse(p.URL)
	if err != nil {
		return
	}
	u.Path, u.RawQuery = "/steady_clock_offset", ""
	o := seconds(p.now())
	body, err := p.get(ctx, u.String())
	d := seconds(p.now())
	if err != nil {
		return
	}
	var a struct {
		Receive  float64 `json:"receive_ts"`
		Transmit float64 `json:"transmit_ts"`
	}
	if json.Unmarshal(body, &a) == nil {
		p.clk.probe(o, a.Receive, a.Transmit, d)
	}
}

func (p *Poller) get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", u, err)
	}
	c := p.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("get %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", u, err)
	}
	if len(b) > MaxBodyBytes {
		return nil, fmt.Errorf("read %s: body larger than %d bytes", u, MaxBodyBytes)
	}
	return b, nil
}

func (p *Poller) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Poller) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

// lastInstant is the latest time a record carries on its reference clock
// (the disaggregated server's, or the worker's own).
func lastInstant(r *reqtrace.Record) float64 {
	if r.Kind == reqtrace.KindWorker {
		t := r.Worker.Timing
		return max(t.Arrival, t.FirstToken, t.LastToken)
	}
	return max(r.DisaggArrival, r.DisaggFirstToken)
}

func instanceOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}
