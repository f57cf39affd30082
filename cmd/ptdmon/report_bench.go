package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ptdmon/ptdmon/internal/benchresult"
	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/report"
)

// readBench reads the file of -bench ("": none), a usage error when it
// is no result: it is read before any run is.
func readBench(file string) (*benchresult.Result, error) {
	if file == "" {
		return nil, nil
	}
	r, err := benchresult.Load(file)
	if err != nil {
		return nil, cli.Usagef("-bench %v", err)
	}
	return &r, nil
}

// benchSpan is the command span of -bench-start and -bench-end: both or
// neither.
func benchSpan(start, end string) (benchresult.Span, error) {
	if (start == "") != (end == "") {
		return benchresult.Span{}, cli.Usagef("-bench-start and -bench-end go together")
	}
	from, err := parseInstant("-bench-start", start)
	if err != nil {
		return benchresult.Span{}, err
	}
	to, err := parseInstant("-bench-end", end)
	if err != nil {
		return benchresult.Span{}, err
	}
	s := benchresult.Span{Start: from, End: to}
	if start != "" && !s.Known() {
		return s, cli.Usagef("-bench-start %s is not before -bench-end %s", start, end)
	}
	return s, nil
}

// attachBench gives the report the load generator's result: given's (the
// file of -bench), else the one the recording dir keeps (ptdmon record),
// else none.
func attachBench(in *report.Input, dir string, given *benchresult.Result) error {
	if given != nil {
		in.Bench = given
		return nil
	}
	if dir == "" {
		return nil
	}
	file := benchresult.Kept(dir)
	if file == "" {
		return nil
	}
	r, err := benchresult.Load(file)
	if err != nil {
		return fmt.Errorf("the recording's benchmark result %w", err)
	}
	in.Bench = &r
	return nil
}

// keepBench keeps in the recording dir the result the load generator's
// command line args wrote since start (or the one at path, -bench-results),
// and says which on stderr; a missing result is said, not an error: the
// recording stands without it.
func keepBench(stderr io.Writer, dir, path string, args []string, start time.Time) {
	// A file system may keep modification times to the second.
	since := start.Add(-time.Second)
	var found string
	if path != "" {
		var err error
		if found, err = benchresult.FindIn(path, since); err != nil {
			fmt.Fprintf(stderr, "ptdmon record: -bench-results %v\n", err)
			return
		}
	} else {
		wd, err := os.Getwd()
		if err != nil {
			return
		}
		if found = benchresult.Find(args, wd, since); found == "" {
			return
		}
	}
	r, err := benchresult.ReadFile(found)
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon record: -bench-results %v\n", err)
		return
	}
	kept, err := benchresult.Keep(dir, found)
	if err != nil {
		fmt.Fprintf(stderr, "ptdmon record: %v\n", err)
		return
	}
	for _, c := range benchresult.Companions(found) {
		if _, err := benchresult.Keep(dir, c); err != nil {
			fmt.Fprintf(stderr, "ptdmon record: %v\n", err)
		}
	}
	fmt.Fprintf(stderr, "ptdmon record: kept %s's result %s (%s) as %s\n", r.Tool, found, r.Format, kept)
}
