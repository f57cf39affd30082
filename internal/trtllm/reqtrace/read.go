package reqtrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one line. Worker lines with time_breakdown_metrics can
// be large, but a line beyond this is treated as malformed rather than
// letting one torn file exhaust memory.
const MaxLineBytes = 64 << 20

// LineError is a line that was skipped.
type LineError struct {
	Pos Pos
	Err error
}

func (e LineError) Error() string { return fmt.Sprintf("%s: %v", e.Pos, e.Err) }
func (e LineError) Unwrap() error { return e.Err }

// FileResult is what one input file yielded.
type FileResult struct {
	Name string
	// Lines counts non-blank lines, Parsed those that parsed (an empty
	// generation-A array parses to no record). Records may exceed Lines when
	// a line holds a generation-A array.
	Lines   int
	Parsed  int
	Records []Record
	Skipped []LineError
}

// NotJSONL reports whether nothing in the file was a record although it had
// content: the whole file is the wrong input, not a few torn lines.
func (f *FileResult) NotJSONL() bool { return f.Lines > 0 && f.Parsed == 0 }

// ReadJSONL reads perf-metrics JSONL. Malformed lines are skipped and kept in
// Skipped with their position (the writer closes a torn tail with a newline,
// so one bad line must not lose the rest). The error is only for I/O.
func ReadJSONL(r io.Reader, name string) (FileResult, error) {
	res := FileResult{Name: name}
	br := bufio.NewReaderSize(r, 1<<16)
	var long []byte
	lineNo := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Accumulate an overlong line; past the bound keep counting
			// bytes only, and report it once its end is reached.
			if len(long) <= MaxLineBytes {
				long = append(long, chunk...)
			}
			continue
		}
		line := chunk
		if long != nil {
			if len(long) <= MaxLineBytes {
				long = append(long, chunk...)
			}
			line = long
		}
		if len(line) > 0 {
			lineNo++
			pos := Pos{File: name, Line: lineNo}
			if len(line) > MaxLineBytes {
				res.Lines++
				res.Skipped = append(res.Skipped, LineError{pos, fmt.Errorf("line longer than %d bytes", MaxLineBytes)})
			} else if !blank(line) {
				res.Lines++
				recs, perr := ParseLine(line, pos)
				if perr != nil {
					res.Skipped = append(res.Skipped, LineError{pos, perr})
				} else {
					res.Parsed++
					res.Records = append(res.Records, recs...)
				}
			}
		}
		long = nil
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("read %s after line %d: %w", name, lineNo, err)
		}
	}
}

func blank(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return false
		}
	}
	return true
}
