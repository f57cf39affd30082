package journey

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// maxFileLineBytes bounds one line of an OTLP JSON file export.
const maxFileLineBytes = 64 << 20

// LooksLikeOTLPJSON says whether the start of a file is OTLP JSON: an
// object whose first key is resourceSpans, as the OpenTelemetry
// Collector's file exporter writes each line.
func LooksLikeOTLPJSON(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t\r\n")
	return bytes.HasPrefix(head, []byte(`"resourceSpans"`)) || bytes.HasPrefix(head, []byte(`"resource_spans"`))
}

// FileResult is what one OTLP JSON file yielded.
type FileResult struct {
	Lines, Spans int
	// Skipped lines with their error (a torn last line, say).
	Skipped []error
}

// ReadOTLPJSON reads an OTLP JSON file export — one
// ExportTraceServiceRequest per line, as the OpenTelemetry Collector's
// file exporter writes — into l. A line that does not decode is skipped
// and kept in Skipped; the error is for I/O only.
func ReadOTLPJSON(r io.Reader, name string, l *Book) (FileResult, error) {
	var res FileResult
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxFileLineBytes)
	var um ptrace.JSONUnmarshaler
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		res.Lines++
		td, err := um.UnmarshalTraces(line)
		if err != nil {
			res.Skipped = append(res.Skipped, fmt.Errorf("%s:%d: %w", name, n, err))
			continue
		}
		res.Spans += td.SpanCount()
		l.Add(Extract(td))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return res, fmt.Errorf("%s:%d: line longer than %d bytes", name, n+1, maxFileLineBytes)
		}
		return res, fmt.Errorf("read %s: %w", name, err)
	}
	return res, nil
}
