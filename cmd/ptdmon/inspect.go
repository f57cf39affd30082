package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

func init() {
	register("inspect", "parse one /metrics (file or URL) and print what ptdmon reads from it", runInspect)
}

// inspection is the JSON that ptdmon inspect prints.
type inspection struct {
	Source   string             `json:"source"`
	Engine   string             `json:"engine"`
	Role     string             `json:"role"`
	Model    string             `json:"model,omitempty"`
	Counters map[string]float64 `json:"counters"`
	Series   map[string]int     `json:"counter_series"`
	Gauges   map[string]float64 `json:"gauges"`
	Hists    map[string]histOut `json:"histograms"`
	Notes    []string           `json:"notes,omitempty"`
	Ignored  []engine.Ignored   `json:"ignored"`
}

type histOut struct {
	Count   *float64        `json:"count"`
	Sum     *float64        `json:"sum"`
	Buckets []engine.Bucket `json:"buckets"`
}

func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engines, sources := engine.EngineChoices(), engine.KVSourceChoices()
	eng := fs.String("engine", "auto", "engine: "+engines)
	role := fs.String("role", "", "role: prefill or decode (default: from the exposition)")
	kvSource := fs.String("kv-source", "", "KV byte source: "+sources)
	contentType := fs.String("content-type", "", "Content-Type of a file (default: text format 0.0.4)")
	timeout := fs.Duration("timeout", 10*time.Second, "timeout for a URL")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptdmon inspect [flags] FILE|URL")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	e, ok := engine.ParseEngine(*eng)
	if !ok {
		fmt.Fprintf(stderr, "ptdmon inspect: -engine %q: want %s\n", *eng, engines)
		return 2
	}
	var r engine.Role
	if *role != "" {
		if r, ok = engine.ParseRole(*role); !ok {
			fmt.Fprintf(stderr, "ptdmon inspect: -role %q: want prefill or decode\n", *role)
			return 2
		}
	}
	kv, ok := engine.ParseKVSource(*kvSource)
	if !ok {
		fmt.Fprintf(stderr, "ptdmon inspect: -kv-source %q: want %s\n", *kvSource, sources)
		return 2
	}
	src := fs.Arg(0)
	body, ct, err := load(src, *contentType, *timeout)
	if err != nil {
		fmt.Fprintln(stderr, "ptdmon inspect:", err)
		if isURL(src) {
			return 1
		}
		return 2
	}
	rd := engine.NewReader(e, r, kv)
	rd.Explain()
	obs, err := rd.Read(body, ct)
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon inspect: %s: %v\n", src, err)
		return 2
	}
	out := inspection{
		Source: src, Engine: string(obs.Engine), Role: string(obs.Role), Model: obs.Model,
		Counters: map[string]float64{}, Series: map[string]int{}, Gauges: map[string]float64{}, Hists: map[string]histOut{},
		Notes: obs.Notes, Ignored: obs.Ignored,
	}
	if out.Ignored == nil {
		out.Ignored = []engine.Ignored{}
	}
	for _, c := range obs.Counters {
		out.Counters[c.Metric.String()] += c.Value
		out.Series[c.Metric.String()]++
	}
	for i := 0; i < engine.NumGauges; i++ {
		if v, ok := obs.Gauge(engine.GaugeAt(i)); ok {
			out.Gauges[engine.GaugeAt(i).String()] = v
		}
	}
	for i, h := range obs.Histograms {
		if h.Present {
			ho := histOut{Buckets: h.Buckets}
			if h.HasCount {
				ho.Count = &h.Count
			}
			if h.HasSum {
				ho.Sum = &h.Sum
			}
			out.Hists[engine.HistogramAt(i).String()] = ho
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "ptdmon inspect:", err)
		return 1
	}
	return 0
}

// load reads a file, or fetches a URL the way the collector does.
func load(src, contentType string, timeout time.Duration) ([]byte, string, error) {
	if isURL(src) {
		f := &scrape.Fetcher{URL: src, Client: scrape.NewClient(1), Timeout: timeout}
		res, err := f.Fetch(context.Background())
		if err != nil {
			return nil, "", err
		}
		if contentType == "" {
			contentType = res.ContentType
		}
		return res.Body, contentType, nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, "", fmt.Errorf("%s: no such file", src)
		}
		return nil, "", err
	}
	return b, contentType, nil
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }
