package reqfeed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

// chunkBytes bounds what one poll reads of one file.
const chunkBytes = 16 << 20

// tail is where reading one JSONL file stands.
type tail struct {
	offset int64
	line   int
	// discard: an overlong line is being skipped up to its newline.
	discard bool
}

// pollFiles reads the lines appended to the files of p.Files since the
// last poll: the JSONL files TensorRT-LLM writes to
// perf_metrics_output_dir, one completed request a line
// (docs/trtllm.md#disaggregated-record). Files there at the first poll are
// read from their end, so serve shows the requests from its start on;
// files that appear later are read from their beginning. A file that
// shrank was replaced and is read again from the start. A line is read
// once it ends in a newline; malformed lines are skipped and counted.
func (p *Poller) pollFiles() error {
	names, err := filepath.Glob(p.Files)
	if err != nil {
		return fmt.Errorf("files %q: %w", p.Files, err)
	}
	first := p.tails == nil
	if first {
		p.tails = map[string]*tail{}
	}
	var errs []error
	for _, name := range names {
		st, err := os.Stat(name)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		t := p.tails[name]
		if t == nil {
			t = &tail{}
			if first {
				t.offset = st.Size()
			}
			p.tails[name] = t
		}
		if st.Size() < t.offset {
			*t = tail{}
		}
		if st.Size() == t.offset {
			continue
		}
		recs, err := p.readTail(name, t)
		if err != nil {
			errs = append(errs, err)
		}
		// The records were written by now: read the clock after them.
		if err := p.file(recs, seconds(p.now()), filepath.Base(name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (p *Poller) readTail(name string, t *tail) ([]reqtrace.Record, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	// What was appended since the last poll, up to a chunk: a chunk is
	// 16 MiB, and most polls find a few lines.
	size := int64(chunkBytes)
	if st, err := f.Stat(); err == nil {
		size = min(size, max(st.Size()-t.offset, 0))
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, t.offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		if n == chunkBytes {
			// One line longer than a chunk: skip it.
			t.offset += int64(n)
			t.discard = true
		}
		return nil, nil
	}
	t.offset += int64(end + 1)
	var recs []reqtrace.Record
	for _, line := range bytes.Split(buf[:end], []byte{'\n'}) {
		if t.discard {
			t.discard = false
			p.n.skipped.Add(1)
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		t.line++
		rs, err := reqtrace.ParseLine(line, reqtrace.Pos{File: name, Line: t.line})
		if err != nil {
			p.n.skipped.Add(1)
			continue
		}
		recs = append(recs, rs...)
	}
	return recs, nil
}
