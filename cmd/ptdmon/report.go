package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/journey"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/report"
	"github.com/ptdmon/ptdmon/internal/service"
	"github.com/ptdmon/ptdmon/internal/slo"
	"github.com/ptdmon/ptdmon/internal/tsdbsource"
)

func init() {
	register("report", "a load-test run's report (HTML, Markdown or JSON), or two runs compared", runReport)
}

// errNotRecording is what loadRecording says of a directory it cannot read
// as a run.
var errNotRecording = errors.New("not a recording")

// loadRecording loads the run recorded in dir (ptdmon serve -record DIR).
// It is the one seam between the report and the recording's store.
var loadRecording = func(dir string) (report.Input, error) {
	return report.Input{}, fmt.Errorf("%s: %w", dir, errNotRecording)
}

// rangeContext bounds the reading of a TSDB range; tests replace it.
var rangeContext = func() (context.Context, context.CancelFunc) { return runContext(0) }

func runReport(args []string, stdout, stderr io.Writer) int {
	c := cli.New("report", "[flags] [DIR | A B]",
		"Writes the report of one run: what ran, the steady-state span, each stage's mean rate with\n"+
			"its 95% confidence interval, the verdict timeline, capacity and advice, SLO attainment,\n"+
			"KV bytes and failures, outlier instances (docs/report.md). The run is a recording (DIR),\n"+
			"a range of a TSDB (-source prometheus=URL -from T -to T), or, to compare two runs\n"+
			"side by side, two recordings or two reports written with -format json (A B).",
		cli.Args{Min: 0, Max: 2}, stdout, stderr)
	c.LogLevel(slog.LevelWarn)
	fs := c.Flags
	format := fs.String("format", "html", "html (one self-contained file), md, json, or llmd-benchmark (llm-d-benchmark's report v0.2.1, one run)")
	benchStart := fs.String("bench-start", "", "when the load generator's command started (RFC 3339 or Unix seconds), with -bench-end: places a result timed on a monotonic clock where no recording marked the command")
	benchEnd := fs.String("bench-end", "", "when the load generator's command ended (RFC 3339 or Unix seconds)")
	traces := fs.String("traces", "", "OTLP JSON trace files of the engines (comma-separated, as ptdmon requests reads them): the benchmark's requests joined with them by X-Request-ID")
	bench := fs.String("bench", "", "the load generator's result file (vllm bench serve, SGLang bench_serving, AIPerf, GuideLLM, llm-d-benchmark report; docs/bench.md); default: the one the recording keeps")
	out := fs.String("o", "", "write to this file (default: standard output)")
	fs.StringVar(out, "out", "", "same as -o, as gen spells it")
	from := fs.String("from", "", "start of the range: RFC 3339 (2026-12-01T10:00:00Z) or Unix seconds")
	to := fs.String("to", "", "end of the range: RFC 3339 or Unix seconds")
	source := fs.String("source", "", "read the run from a TSDB: prometheus=URL (Prometheus, VictoriaMetrics, Thanos, Mimir)")
	interval := fs.Duration("interval", time.Second, "step of the TSDB read (-source)")
	window := fs.Duration("window", ledger.DefaultWindow, "window W of the windowed rates (-source)")
	kvBytes := fs.Int64("kv-bytes-per-request", 0, "B_request in bytes, for KV req/s (-source; a recording keeps its own)")
	var th slo.Thresholds
	fs.Float64Var(&th.TTFT, "slo-ttft", 0, "TTFT SLO in seconds, for attainment")
	fs.Float64Var(&th.ITL, "slo-itl", 0, "ITL SLO in seconds")
	fs.Float64Var(&th.E2E, "slo-e2e", 0, "end-to-end latency SLO in seconds")
	// A string, so that -h shows the advice's default and not a sentinel.
	headroom := fs.String("headroom", "", "capacity the advice leaves unused, 0 ≤ h < 1 (default 0.2)")
	capFrom := fs.String("capacities-from", "", "an earlier run's recording whose capacities this run's start from (docs/advisor.md)")
	return c.Run(args, func(pos []string) error {
		if *format != "html" && *format != "md" && *format != "json" && *format != "llmd-benchmark" {
			return cli.Usagef("-format %q: want html, md, json or llmd-benchmark", *format)
		}
		if len(pos) == 2 && (*bench != "" || *format == "llmd-benchmark") {
			return cli.Usagef("-bench and -format llmd-benchmark take one run: each recording of a comparison brings its own result")
		}
		given, err := readBench(*bench)
		if err != nil {
			return err
		}
		cmdSpan, err := benchSpan(*benchStart, *benchEnd)
		if err != nil {
			return err
		}
		var journeys []journey.Record
		if *traces != "" {
			if len(pos) == 2 {
				return cli.Usagef("-traces takes one run")
			}
			if journeys, err = otlpRecords("report", strings.Split(*traces, ","), stderr); err != nil {
				return err
			}
		}
		opts := report.Options{}
		if *headroom != "" {
			h, err := strconv.ParseFloat(*headroom, 64)
			if err != nil || h < 0 || h >= 1 || math.IsNaN(h) {
				return cli.Usagef("-headroom %q: want 0 ≤ headroom < 1", *headroom)
			}
			opts.Headroom, opts.HeadroomSet = h, true
		}
		if opts.From, err = parseInstant("-from", *from); err != nil {
			return err
		}
		if opts.To, err = parseInstant("-to", *to); err != nil {
			return err
		}
		if th != (slo.Thresholds{}) {
			if err := th.Check(); err != nil {
				return cli.Usage(err)
			}
		}
		var body []byte
		switch {
		case *source != "":
			if len(pos) > 0 {
				return cli.Usagef("-source reads one run: give no DIR")
			}
			if opts.From.IsZero() || opts.To.IsZero() {
				return cli.Usagef("-source needs -from and -to")
			}
			in, err := readSource(*source, opts.From, opts.To, *interval, *window, *kvBytes, c.Logger())
			if err != nil {
				return err
			}
			in.Meta.SLO = th
			if err := attachBench(&in, "", given); err != nil {
				return err
			}
			in.Command, in.Journeys = cmdSpan, journeys
			body, err = renderReport(in, opts, *format)
			if err != nil {
				return err
			}
		case len(pos) == 1:
			in, err := loadRun(pos[0])
			if err != nil {
				return err
			}
			if *capFrom != "" {
				if opts.Prior, err = service.PriorFrom(*capFrom, in.Meta.Interval, in.Meta.Window); err != nil {
					return err
				}
			}
			if th != (slo.Thresholds{}) {
				in.Meta.SLO = th
			}
			if err := attachBench(&in, pos[0], given); err != nil {
				return err
			}
			in.Command, in.Journeys = cmdSpan, journeys
			body, err = renderReport(in, opts, *format)
			if err != nil {
				return err
			}
		case len(pos) == 2:
			if same(pos[0], pos[1]) {
				return cli.Usagef("%s and %s are the same file: compare two runs", pos[0], pos[1])
			}
			a, err := loadReport(pos[0], opts, th)
			if err != nil {
				return err
			}
			b, err := loadReport(pos[1], opts, th)
			if err != nil {
				return err
			}
			if why := report.SameRun(a, b); why != "" {
				return cli.Usagef("%s and %s are one run (%s): compare two runs", pos[0], pos[1], why)
			}
			cmp := report.Compare(a, b, pos[0], pos[1])
			body, err = renderComparison(&cmp, *format)
			if err != nil {
				return err
			}
		default:
			return cli.Usagef("give a recording DIR, two runs A B, or -source prometheus=URL -from T -to T")
		}
		return writeOut(*out, body, stdout)
	})
}

// loadRun loads a recording, a usage error when the directory is none.
func loadRun(dir string) (report.Input, error) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return report.Input{}, cli.Usagef("%s: %v", dir, errors.Unwrap(err))
	case !st.IsDir():
		return report.Input{}, cli.Usagef("%s: not a directory (want a recording; a report written with -format json is read only when comparing two runs)", dir)
	}
	in, err := loadRecording(dir)
	if errors.Is(err, errNotRecording) {
		return in, cli.Usage(err)
	}
	return in, err
}

// same says whether paths a and b name one file or directory.
func same(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// loadReport is one side of a comparison: a report written with -format
// json, or a recording's report.
func loadReport(path string, opts report.Options, th slo.Thresholds) (*report.Report, error) {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		r, err := report.ReadJSON(b)
		if err != nil {
			return nil, cli.Usagef("%s: %v", path, err)
		}
		return r, nil
	}
	in, err := loadRun(path)
	if err != nil {
		return nil, err
	}
	if err := attachBench(&in, path, nil); err != nil {
		return nil, err
	}
	if th != (slo.Thresholds{}) {
		in.Meta.SLO = th
	}
	r, err := report.Build(in, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// maxRangePoints bounds the points of a -source range: the ledger holds
// them all, with their per-instance detail. 100,000 is 27 h at 1 s.
const maxRangePoints = 100_000

// readSource reads [from, to] of a TSDB into the points of a run.
func readSource(source string, from, to time.Time, interval, window time.Duration, kvBytes int64, log *slog.Logger) (report.Input, error) {
	_, base, err := config.ParseSource(source)
	if err != nil {
		return report.Input{}, cli.Usage(err)
	}
	if !to.After(from) {
		return report.Input{}, cli.Usagef("-from %s is not before -to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if interval <= 0 || window < interval {
		return report.Input{}, cli.Usagef("-interval %v, -window %v: want 0 < interval ≤ window", interval, window)
	}
	steps := int(to.Sub(from)/interval) + 1
	if steps > maxRangePoints {
		return report.Input{}, cli.Usagef("-from %s to -to %s at -interval %v is %d points, more than the %d a report reads: shorten the range or lengthen -interval",
			from.Format(time.RFC3339), to.Format(time.RFC3339), interval, steps, maxRangePoints)
	}
	breq := kvsize.Request{Basis: kvsize.BasisUnset}
	if kvBytes > 0 {
		breq = kvsize.Request{Bytes: kvBytes, Basis: kvsize.BasisFlag}
	}
	l := ledger.New(ledger.Config{Interval: interval, Window: window, History: steps + 1, KVRequest: breq, Logger: log})
	ctx, cancel := rangeContext()
	defer cancel()
	rng, err := tsdbsource.ReadRange(ctx, l, tsdbsource.Options{URL: base, Interval: interval, Window: window, Logger: log}, from, to)
	if err != nil {
		return report.Input{}, fmt.Errorf("read %s: %w", base, err)
	}
	in := report.Input{Points: rng.Points, Meta: report.Meta{BRequest: breq, Version: cli.Version(),
		Interval: interval, Window: window,
		Annotations: []report.Annotation{{Time: from, Text: "read from " + base}}}}
	for _, t := range rng.Targets {
		in.Meta.Targets = append(in.Meta.Targets, report.Target{Name: t.Name, Role: string(t.Role), Engine: string(t.Engine)})
	}
	return in, nil
}

func renderReport(in report.Input, opts report.Options, format string) ([]byte, error) {
	r, err := report.Build(in, opts)
	if err != nil {
		return nil, err
	}
	switch format {
	case "md":
		return r.Markdown(), nil
	case "json":
		return r.JSON()
	case "llmd-benchmark":
		return r.LLMDBenchmark()
	default:
		return r.HTML()
	}
}

func renderComparison(c *report.Comparison, format string) ([]byte, error) {
	switch format {
	case "md":
		return c.Markdown(), nil
	case "json":
		return c.JSON()
	default:
		return c.HTML()
	}
}

func writeOut(path string, body []byte, stdout io.Writer) error {
	if path == "" || path == "-" {
		_, err := stdout.Write(body)
		return err
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// parseInstant reads RFC 3339 or Unix seconds; "" is the zero time.
func parseInstant(flagName, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && f > 0 {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	return time.Time{}, cli.Usagef("%s %q: want RFC 3339 (2026-12-01T10:00:00Z) or Unix seconds", flagName, strings.TrimSpace(s))
}
