package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ptdmon/ptdmon/internal/api"
	"github.com/ptdmon/ptdmon/internal/cli"
	"github.com/ptdmon/ptdmon/internal/journey"
)

// isOTLPFile says whether a file is an OTLP JSON file export rather than
// TensorRT-LLM records, from its first bytes.
func isOTLPFile(name string) (bool, error) {
	if err := checkRegularFile("", name); err != nil {
		return false, err
	}
	f, err := os.Open(name)
	if err != nil {
		return false, openError(err)
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, fmt.Errorf("read %s: %w", name, err)
	}
	return journey.LooksLikeOTLPJSON(head[:n]), nil
}

// otlpRequests joins the spans of OTLP JSON file exports (docs/traces.md)
// and reports each request's phases.
func otlpRequests(files []string, asJSON bool, top int, stdout, stderr io.Writer) error {
	recs, err := otlpRecords("requests", files, stderr)
	if err != nil {
		return err
	}
	if !asJSON {
		return journey.WriteText(stdout, recs, top)
	}
	page := journey.Select(recs, journey.Query{Sort: journey.SortSlowest})
	out := api.RequestsResponse{Total: page.Total, Limit: page.Total, Requests: []api.RequestJSON{},
		Histograms: journey.Histograms(page.Records)}
	for i := range page.Records {
		out.Requests = append(out.Requests, api.RequestOf(&page.Records[i]))
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// otlpRecords joins the spans of OTLP JSON file exports into requests; a
// line that does not decode is said on stderr as ptdmon cmd, a file none
// of whose lines does is a usage error.
func otlpRecords(cmd string, files []string, stderr io.Writer) ([]journey.Record, error) {
	l := journey.NewBook(1 << 30)
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, openError(err)
		}
		fr, err := journey.ReadOTLPJSON(f, name, l)
		f.Close()
		if err != nil {
			return nil, err
		}
		for _, e := range fr.Skipped {
			fmt.Fprintf(stderr, "ptdmon %s: skipped %v\n", cmd, e)
		}
		if fr.Lines > 0 && len(fr.Skipped) == fr.Lines {
			return nil, cli.Usage(fmt.Errorf("%s: no line of %d decodes as OTLP JSON", name, fr.Lines))
		}
	}
	return l.Records(), nil
}
