package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/ptdmon/ptdmon/internal/reqledger"
)

func init() {
	register("requests", "per-request phases from TensorRT-LLM perf-metrics JSONL", runRequests)
}

// exitError carries the exit code with the message, so each input step can
// say whether the input was bad (2) or the system failed (1).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func badInput(err error) error { return &exitError{2, err} }
func failure(err error) error  { return &exitError{1, err} }

func runRequests(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("requests", flag.ContinueOnError)
	fset.SetOutput(stderr)
	clockSync := fset.String("clock-sync", "", "clock-sync probes (JSON) to align each worker's clock to the disagg server's")
	usage := fset.String("usage", "", "token usage (JSON: request id → {prompt_tokens, completion_tokens}) for TPOT")
	asJSON := fset.Bool("json", false, "print a machine-readable JSON report instead of text")
	htmlOut := fset.String("html", "", "also write a self-contained HTML report with a waterfall to this file")
	top := fset.Int("top", 10, "how many of the slowest requests to list")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "usage: ptdmon requests FILE.jsonl... [-clock-sync FILE] [-usage FILE] [-json] [-html OUT.html] [-top N]")
		fmt.Fprintln(stderr, "\nReads TensorRT-LLM per-request perf-metrics JSONL (disagg server or worker files, any")
		fmt.Fprintln(stderr, "format generation) and reports queue, prefill, KV transfer, decode, TTFT, E2E and TPOT.")
		fmt.Fprintln(stderr, "Flags may come before or after the files.")
		fset.PrintDefaults()
	}
	files, err := parseInterspersed(fset, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "ptdmon requests: no input files")
		fset.Usage()
		return 2
	}
	if *top < 0 {
		fmt.Fprintln(stderr, "ptdmon requests: -top must be ≥ 0")
		return 2
	}
	if err := requests(files, *clockSync, *usage, *asJSON, *htmlOut, *top, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "ptdmon requests: %v\n", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	return 0
}

// parseInterspersed lets flags follow the file arguments, as in
// "ptdmon requests a.jsonl -json"; the standard flag package stops at the
// first non-flag.
func parseInterspersed(fset *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fset.Parse(args); err != nil {
			return nil, err
		}
		args = fset.Args()
		if len(args) == 0 {
			return files, nil
		}
		if args[0] == "--" {
			return append(files, args[1:]...), nil
		}
		files = append(files, args[0])
		args = args[1:]
	}
}

func requests(files []string, clockPath, usagePath string, asJSON bool, htmlPath string, top int, stdout, stderr io.Writer) error {
	var cs *reqledger.ClockSync
	if clockPath != "" {
		b, err := readInput(clockPath)
		if err != nil {
			return err
		}
		if cs, err = reqledger.ParseClockSync(b); err != nil {
			return badInput(fmt.Errorf("%s: %w", clockPath, err))
		}
	}
	var u reqledger.Usage
	if usagePath != "" {
		b, err := readInput(usagePath)
		if err != nil {
			return err
		}
		if u, err = reqledger.ParseUsage(b); err != nil {
			return badInput(fmt.Errorf("%s: %w", usagePath, err))
		}
	}
	var results []reqledger.FileResult
	for _, name := range files {
		fr, err := readJSONL(name)
		if err != nil {
			return err
		}
		for _, e := range fr.Skipped {
			fmt.Fprintf(stderr, "ptdmon requests: skipped %v\n", e)
		}
		if fr.NotJSONL() {
			return badInput(fmt.Errorf("%s: no perf-metrics record in %d lines: not TensorRT-LLM perf-metrics JSONL", name, fr.Lines))
		}
		results = append(results, fr)
	}
	rep := reqledger.Build(results, cs, u, reqledger.Options{Top: top})
	if htmlPath != "" {
		if err := writeHTML(htmlPath, rep); err != nil {
			return failure(err)
		}
	}
	var err error
	if asJSON {
		err = reqledger.WriteJSON(stdout, rep)
	} else {
		err = reqledger.WriteText(stdout, rep)
	}
	if err != nil {
		return failure(fmt.Errorf("write report: %w", err))
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

func readJSONL(name string) (reqledger.FileResult, error) {
	f, err := os.Open(name)
	if err != nil {
		return reqledger.FileResult{}, openError(err)
	}
	defer f.Close()
	fr, err := reqledger.ReadJSONL(f, name)
	if err != nil {
		return fr, failure(err)
	}
	return fr, nil
}

// openError: a path that does not exist is a usage error; anything else
// (permissions, I/O) is a failure of the system.
func openError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return badInput(err)
	}
	return failure(err)
}

func writeHTML(path string, rep *reqledger.Report) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create HTML report: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close HTML report: %w", cerr)
		}
	}()
	return reqledger.WriteHTML(f, rep)
}
