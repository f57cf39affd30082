package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

func init() {
	register("requests", "per-request phases from TensorRT-LLM perf-metrics JSONL or OTLP JSON traces", runRequests)
}

func runRequests(args []string, stdout, stderr io.Writer) int {
	c := cli.New("requests", "[flags] FILE.jsonl...",
		"Reads TensorRT-LLM per-request perf-metrics JSONL (disagg server or worker files, any\n"+
			"format generation) and reports queue, prefill, KV transfer, decode, TTFT, E2E and TPOT.\n"+
			"Also reads OTLP JSON file exports of vLLM traces and joins each request's legs (docs/traces.md).\n"+
			"Flags may come before or after the files.", cli.SomeArg, stdout, stderr)
	fset := c.Flags
	clockSync := fset.String("clock-sync", "", "clock-sync probes (JSON) to align each worker's clock to the disagg server's")
	usage := fset.String("usage", "", "token usage (JSON: request id → {prompt_tokens, completion_tokens}) for TPOT")
	asJSON := fset.Bool("json", false, "print a machine-readable JSON report instead of text")
	htmlOut := fset.String("html", "", "also write a self-contained HTML report with a waterfall to this file")
	top := fset.Int("top", 10, "how many of the slowest requests to list")
	return c.Run(args, func(files []string) error {
		if *top < 0 {
			return cli.Usagef("-top must be ≥ 0")
		}
		otlp, err := isOTLPFile(files[0])
		if err != nil {
			return err
		}
		if otlp {
			if *clockSync != "" || *usage != "" || *htmlOut != "" {
				return cli.Usagef("-clock-sync, -usage and -html are for TensorRT-LLM records, not OTLP traces")
			}
			return otlpRequests(files, *asJSON, *top, stdout, stderr)
		}
		return requests(files, *clockSync, *usage, *asJSON, *htmlOut, *top, stdout, stderr)
	})
}

func requests(files []string, clockPath, usagePath string, asJSON bool, htmlPath string, top int, stdout, stderr io.Writer) error {
	var cs *reqtrace.ClockSync
	if clockPath != "" {
		b, err := readInput(clockPath)
		if err != nil {
			return err
		}
		if cs, err = reqtrace.ParseClockSync(b); err != nil {
			return cli.Usage(fmt.Errorf("%s: %w", clockPath, err))
		}
	}
	var u reqtrace.Usage
	if usagePath != "" {
		b, err := readInput(usagePath)
		if err != nil {
			return err
		}
		if u, err = reqtrace.ParseUsage(b); err != nil {
			return cli.Usage(fmt.Errorf("%s: %w", usagePath, err))
		}
	}
	var results []reqtrace.FileResult
	for _, name := range files {
		fr, err := readJSONL(name)
		if err != nil {
			return err
		}
		for _, e := range fr.Skipped {
			fmt.Fprintf(stderr, "ptdmon requests: skipped %v\n", e)
		}
		if fr.NotJSONL() {
			return cli.Usage(fmt.Errorf("%s: no perf-metrics record in %d lines: not TensorRT-LLM perf-metrics JSONL", name, fr.Lines))
		}
		results = append(results, fr)
	}
	rep := reqtrace.Build(results, cs, u, reqtrace.Options{Top: top})
	if cs == nil && rep.ClockBroken > 0 {
		fmt.Fprintf(stderr, "ptdmon requests: e2e and decode are missing for %d requests timed on different clocks: -clock-sync FILE aligns them (docs/requests.md)\n", rep.ClockBroken)
	}
	if htmlPath != "" {
		if err := writeHTML(htmlPath, rep); err != nil {
			return err
		}
	}
	var err error
	if asJSON {
		err = reqtrace.WriteJSON(stdout, rep)
	} else {
		err = reqtrace.WriteText(stdout, rep)
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func readInput(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, openError(err)
	}
	return b, nil
}

func readJSONL(name string) (reqtrace.FileResult, error) {
	if err := checkRegularFile("", name); err != nil {
		return reqtrace.FileResult{}, err
	}
	f, err := os.Open(name)
	if err != nil {
		return reqtrace.FileResult{}, openError(err)
	}
	defer f.Close()
	fr, err := reqtrace.ReadJSONL(f, name)
	if err != nil {
		return fr, err
	}
	return fr, nil
}

// openError: a path that does not exist is a usage error; anything else
// (permissions, I/O) is a failure of the system.
func openError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return cli.Usage(err)
	}
	return err
}

func writeHTML(path string, rep *reqtrace.Report) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create HTML report: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close HTML report: %w", cerr)
		}
	}()
	return reqtrace.WriteHTML(f, rep)
}
