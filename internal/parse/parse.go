// Package parse reads one Prometheus text (0.0.4) or OpenMetrics exposition with
// the parser Prometheus itself uses, so ptdmon sees exactly the samples a
// Prometheus server scraping the same target would see.
package parse

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"mime"
	"regexp"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
)

// Sample is one float sample of an exposition. Its byte slices point into the
// body being parsed and are valid only during the visit callback.
type Sample struct {
	// Name is the series' metric name, e.g. "vllm:e2e_request_latency_seconds_bucket".
	Name []byte
	// Series is the raw series text (name and label set as written); it
	// identifies the series within one target from scrape to scrape.
	Series []byte
	// Type is the type declared by the family's # TYPE line, or
	// model.MetricTypeUnknown when the sample does not belong to the declared family.
	Type  model.MetricType
	Value float64
	// Same says the series text is that of the sample visited at the same
	// place (the same count of visits before it) in the last exposition,
	// and that the parser read that exposition in full (visit called for
	// all its samples without error): whatever visit keeps by place from
	// that read belongs to this series.
	Same bool
}

// MaxSeriesBytes bounds the text of one series (name and labels). Label
// sets this large are never real; past 16 MiB Prometheus' label encoding
// panics, so they are refused before any label is built.
const MaxSeriesBytes = 1 << 20

// ErrDuplicate is wrapped by errors for expositions that carry one series
// twice with different values. Prometheus rejects such a scrape; reading it
// would take one of the values as a counter reset every scrape.
var ErrDuplicate = errors.New("duplicate series with different values")

// ErrNotExposition is wrapped by errors for bodies that are not a metrics
// exposition at all (JSON, HTML, binary garbage).
var ErrNotExposition = errors.New("not a Prometheus text or OpenMetrics exposition")

// Parser parses expositions one at a time. It is not safe for concurrent use;
// keep one per target.
type Parser struct {
	// Wanted, if set, says which sample names visit is called for; the
	// answer is asked once per name and kept. Samples of other names are
	// still parsed and checked (an exposition is valid or not as a whole),
	// but they cost no float conversion, no label and no state per series.
	Wanted func(name string) bool

	p      textparse.Parser
	family []byte
	ftype  model.MetricType
	seen   map[uint64]uint64 // series hash → value bits, for duplicates
	n      int               // samples in the last exposition parsed

	names   map[string]*nameState
	touched []*nameState
	cur     *nameState
	gen     uint32

	fast fastState
	memo memo
	// complete: the last exposition was read in full (Sample.Same)
	complete bool
	quick    int // expositions read by the scanner, for tests
	hits     int // sample lines of the last exposition the memo served, for tests
	metaHits int // and comment lines
}

// nameState is what the parser keeps per sample name: whether visit wants
// it, and a digest of its series in order, which proves that a name's
// series have no duplicate when they are those of an exposition already
// checked.
type nameState struct {
	name     string
	wanted   bool
	digest   uint64
	n        int
	verified uint64 // digest of the last checked series of the name
	verN     int    // and their number, -1 none
	repeat   bool   // a series repeated (with one value): never verified
	gen      uint32 // last exposition with the name
	idx      uint32 // its index in that exposition's names (Parser.touched)
}

// Samples returns the number of float samples in the last exposition
// parsed, whether visit used them or not.
func (p *Parser) Samples() int { return p.n }

// name returns the state of a sample name, creating it when new.
func (p *Parser) name(n []byte) *nameState {
	if c := p.cur; c != nil && c.name == string(n) {
		return c
	}
	st, ok := p.names[string(n)]
	if !ok {
		st = &nameState{name: string(n), wanted: p.Wanted == nil || p.Wanted(string(n)), verN: -1}
		p.names[st.name] = st
	}
	p.touch(st)
	p.cur = st
	return st
}

// touch marks a name as used in the exposition being read.
func (p *Parser) touch(st *nameState) {
	if st.gen != p.gen {
		st.gen, st.digest, st.n, st.repeat = p.gen, 0, 0, false
		st.idx = uint32(len(p.touched))
		p.touched = append(p.touched, st)
	}
}

// digestSeed: digests are compared only within one process.
var digestSeed = maphash.MakeSeed()

// add folds one series into its name's digest.
func (st *nameState) add(series []byte) { st.fold(hashSeries(series)) }

// fold folds the hash of one series into its name's digest.
func (st *nameState) fold(h uint64) {
	st.digest = (st.digest ^ h) * 0x9e3779b97f4a7c15
	st.n++
}

// begin prepares the per-name state for one exposition.
func (p *Parser) begin() {
	if p.names == nil {
		p.names = make(map[string]*nameState)
	}
	p.gen++
	// The names of the last exposition stay with the memo of its lines.
	p.touched, p.memo.names = p.memo.names[:0], p.touched
	p.cur = nil
	p.n = 0
	if p.gen%16 == 0 {
		// Names a target stopped exporting are forgotten.
		for k, st := range p.names {
			if p.gen-st.gen > 16 {
				delete(p.names, k)
			}
		}
	}
}

// checked reports whether every name's series are those of an exposition
// already checked for duplicates.
func (p *Parser) checked() bool {
	for _, st := range p.touched {
		if st.digest != st.verified || st.n != st.verN {
			return false
		}
	}
	return true
}

// verify records the names' series of an exposition found free of duplicates.
func (p *Parser) verify() {
	for _, st := range p.touched {
		st.verified, st.verN = st.digest, st.n
		if st.repeat {
			// A series given twice with one value is valid, but a digest
			// cannot tell a later body that gives it two values.
			st.verN = -1
		}
	}
}

// Format names the exposition format chosen for a Content-Type.
func Format(contentType string) (string, error) {
	if contentType == "" {
		return "text/plain", nil
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", fmt.Errorf("content type %q: %w", contentType, err)
	}
	switch mt {
	case "application/openmetrics-text":
		if v := params["version"]; strings.HasPrefix(v, "2.") {
			return "", fmt.Errorf("content type %q: OpenMetrics 2 is not supported", contentType)
		}
		return mt, nil
	case "text/plain":
		return mt, nil
	case "application/json":
		return "", fmt.Errorf("content type %q: %w (a JSON body; TensorRT-LLM serves Prometheus text at /prometheus/metrics)", contentType, ErrNotExposition)
	case "text/html":
		return "", fmt.Errorf("content type %q: %w", contentType, ErrNotExposition)
	}
	// Unknown types are read as the text format, as Prometheus does with a fallback.
	return "text/plain", nil
}

// Parse reads body and calls visit for every float sample, in order (with
// Wanted set, for the samples it wants). The parser is chosen by
// contentType (OpenMetrics or the text format; empty or unknown types are
// read as text). A non-nil error from visit stops parsing and is returned.
// Whatever visit collected must be discarded by the caller when Parse
// returns an error: an exposition is taken whole or not at all.
//
// Text-format expositions are read by a scanner that accepts a subset of
// the format and yields exactly what Prometheus' parser yields for it
// (proven by FuzzScannerAgreesWithTextparse); anything outside the subset,
// every error and every exposition whose series changed are read by
// Prometheus' parser itself.
func (p *Parser) Parse(body []byte, contentType string, visit func(*Sample) error) error {
	complete := p.complete
	p.complete = false
	format, err := Format(contentType)
	if err != nil {
		return err
	}
	if looksBinary(body) {
		return fmt.Errorf("body: %w (binary data)", ErrNotExposition)
	}
	if format == "text/plain" {
		p.begin()
		if p.scan(body, complete) && p.checked() {
			p.quick++
			err = p.visitScanned(body, visit)
			p.complete = err == nil
			return err
		}
		p.release()
	}
	err = p.parse(body, format, visit)
	p.complete = err == nil
	return err
}

// parse reads body with Prometheus' parser.
func (p *Parser) parse(body []byte, format string, visit func(*Sample) error) error {
	if format == "application/openmetrics-text" {
		p.p = textparse.NewOpenMetricsParser(body, nil, textparse.WithOMParserSTSeriesSkipped())
	} else {
		p.p = textparse.NewPromParser(body, nil, false)
	}
	p.fast.active = false
	p.begin()
	p.family, p.ftype = p.family[:0], model.MetricTypeUnknown
	if p.seen == nil {
		p.seen = make(map[uint64]uint64)
	}
	clear(p.seen)
	if format == "text/plain" {
		// Text bodies are read by the scanner from the next read on: the
		// map is needed again only when their series change.
		defer func() { p.seen = nil }()
	}
	var s Sample
	line := 0
	for {
		et, err := p.p.Next()
		if errors.Is(err, io.EOF) {
			p.verify()
			return nil
		}
		line++
		if err != nil {
			if first := firstDataLine(body); len(first) > 0 && (first[0] == '[' || first[0] == '{' && !looksLikeSeries(first)) {
				return fmt.Errorf("first data line starts with %q: %w (a JSON document?)", first[0], ErrNotExposition)
			}
			return fmt.Errorf("parse %s exposition near entry %d: %w", format, line, scrubbed{err})
		}
		switch et {
		case textparse.EntryType:
			name, t := p.p.Type()
			p.family = append(p.family[:0], name...)
			p.ftype = t
		case textparse.EntrySeries:
			series, _, v := p.p.Series()
			if len(series) > MaxSeriesBytes {
				return fmt.Errorf("parse %s exposition near entry %d: a series of %d bytes (at most %d)", format, line, len(series), MaxSeriesBytes)
			}
			s.Name = seriesName(series)
			st := p.name(s.Name)
			h, bits := xxhash.Sum64(series), math.Float64bits(v)
			if prev, dup := p.seen[h]; dup {
				if prev != bits {
					return fmt.Errorf("entry %d: %w: a series of %s", line, ErrDuplicate, clip(seriesName(series)))
				}
				st.repeat = true
			}
			p.seen[h] = bits
			p.n++
			st.add(series)
			if !st.wanted {
				continue
			}
			s.Series = series
			s.Value = v
			s.Same = false
			s.Type = model.MetricTypeUnknown
			if belongs(s.Name, p.family, p.ftype) {
				s.Type = p.ftype
			}
			if err := visit(&s); err != nil {
				return err
			}
		case textparse.EntryHistogram:
			return fmt.Errorf("native histograms are not supported")
		}
	}
}

// Labels writes the labels of the sample most recently passed to visit.
// It allocates; call it only for series seen for the first time.
func (p *Parser) Labels(l *labels.Labels) {
	if p.fast.active {
		p.fast.labels(l)
		return
	}
	p.p.Labels(l)
}

// seriesName returns the metric name part of a raw series. Names in the
// quoted UTF-8 form ({"name",...}) are returned with their quotes removed.
func seriesName(series []byte) []byte {
	if len(series) > 0 && series[0] == '{' {
		// Prometheus' lexer allows blanks after the brace.
		rest := bytes.TrimLeft(series[1:], " \t")
		if len(rest) > 0 && rest[0] == '"' {
			if end := bytes.IndexByte(rest[1:], '"'); end >= 0 {
				return rest[1 : end+1]
			}
		}
		return nil
	}
	if i := bytes.IndexByte(series, '{'); i >= 0 {
		// Prometheus' lexer allows blanks between the name and the brace.
		return bytes.TrimRight(series[:i], " \t")
	}
	return series
}

// belongs reports whether a sample named name is part of the family declared
// last. Counters and histograms add suffixes to their family name.
func belongs(name, family []byte, t model.MetricType) bool {
	if len(family) == 0 || !bytes.HasPrefix(name, family) {
		return false
	}
	suffix := name[len(family):]
	if len(suffix) == 0 {
		return true
	}
	switch t {
	case model.MetricTypeCounter:
		return string(suffix) == "_total"
	case model.MetricTypeHistogram, model.MetricTypeGaugeHistogram:
		return string(suffix) == "_bucket" || string(suffix) == "_sum" || string(suffix) == "_count"
	case model.MetricTypeSummary:
		return string(suffix) == "_sum" || string(suffix) == "_count"
	}
	return false
}

// firstDataLine returns the first line that is neither blank nor a comment.
func firstDataLine(b []byte) []byte {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return line
		}
	}
	return nil
}

func looksBinary(b []byte) bool {
	n := len(b)
	if n > 512 {
		n = 512
	}
	return bytes.IndexByte(b[:n], 0) >= 0
}

// looksLikeSeries tells a quoted-name series line ({"a.b"} 1) from a JSON object.
func looksLikeSeries(b []byte) bool {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		nl = len(b)
	}
	line := b[:nl]
	return bytes.IndexByte(line, '}') > 0 && !bytes.Contains(line, []byte(`":`))
}

// scrubbed is a parser error whose text leaves out what it quotes from the
// body: a target that serves another service's page must not have that
// page shown in last_error. Token kinds (INVALID, LNAME) are kept.
type scrubbed struct{ err error }

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
var tokenKind = regexp.MustCompile(`^"[A-Z_]{1,16}"$`)

func (s scrubbed) Error() string {
	return quoted.ReplaceAllStringFunc(s.err.Error(), func(q string) string {
		if tokenKind.MatchString(q) {
			return q
		}
		return `"…"`
	})
}

func (s scrubbed) Unwrap() error { return s.err }

// clip shortens a series for an error text.
func clip(series []byte) string {
	const n = 120
	if len(series) <= n {
		return string(series)
	}
	return string(series[:n]) + "…"
}
