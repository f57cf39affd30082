package parse

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/model/value"
)

// The scanner reads the text format (0.0.4) the way engines write it: one
// sample per line, "name{label="value",...} value [timestamp]", with
// "# HELP" and "# TYPE" lines and comments. It follows the rules of
// Prometheus' lexer (model/textparse/promlex.l) for exactly that shape and
// gives up on anything else (leading blanks, quoted names, a label value
// spanning lines, a float it cannot prove valid, any error), so that the
// exposition is read again by Prometheus' own parser, which then decides.
// What it accepts it reads as that parser does; FuzzScannerAgreesWithTextparse
// checks this on arbitrary input.
//
// It validates the whole body before the first visit, so a body it gives
// up on halfway has not been half-visited: the wanted samples are kept as
// records (offsets into the body) until the end.

// record is one wanted sample of a scanned body.
type record struct {
	start, nameEnd, seriesEnd int32 // line start, end of name, end of series
	typeLine                  int32 // offset of the last # TYPE line before it, -1 none
	same                      bool  // Sample.Same
	typ                       uint8 // Sample.Type, an index in metaTypes
	value                     float64
}

// fastState is the scanner's view of the sample being visited.
type fastState struct {
	active bool
	body   []byte
	rec    *record
	recs   *[]record
}

var recordPool = sync.Pool{New: func() any { return new([]record) }}

// scan validates body and records its wanted samples. False: the body is
// outside the subset (or invalid); read it with Prometheus' parser.
//
// complete says the last exposition was read in full: its sample lines
// whose series the memo recalls, every one before them too, are then the
// Same as this one's.
func (p *Parser) scan(body []byte, complete bool) bool {
	if len(body) > math.MaxInt32 {
		return false
	}
	if p.fast.recs == nil {
		p.fast.recs = recordPool.Get().(*[]record)
	}
	recs, ok := p.scanLines(body, (*p.fast.recs)[:0], complete)
	*p.fast.recs = recs
	return ok
}

// scanLines is scan's loop over the lines, appending the records to recs.
// (A slice the loop appends to stays in registers, not in a closure.)
func (p *Parser) scanLines(body []byte, recs []record, complete bool) ([]record, bool) {
	var family []byte
	ftype := model.MetricTypeUnknown
	ftyp := uint8(0) // ftype, an index in metaTypes
	typeLine := int32(-1)
	var last prior
	// The memo serves only the exposition right after the one it
	// describes: the name states it points to are those of that read.
	recall := p.memo.gen != 0 && p.memo.gen == p.gen-1
	p.memo.gen, p.hits, p.metaHits = 0, 0, 0
	k, km := 0, 0      // sample lines and comment lines so far
	var typed struct { // the type of the last wanted sample
		st   *nameState
		line int32 // its # TYPE line
		typ  uint8
	}
	// aligned: every sample line so far was recalled, so the same names
	// came in the same order and the wanted ones are visited at the places
	// they were in the last exposition (Sample.Same)
	aligned := complete
	for i := 0; i < len(body); {
		start := i
		var (
			line               []byte
			nameEnd, seriesEnd int
			val, ts            []byte
			v                  float64
			parsed             bool // v is val's value
			st                 *nameState
			h                  uint64
			se                 int
			memo, ok           bool
		)
		if recall && body[i] == '#' {
			if mm, end, ok := p.memo.recallMeta(body, i, km); ok {
				// A comment line of the last exposition, already read.
				if mm.nameLen > 0 {
					family = body[i+int(mm.nameOff) : i+int(mm.nameOff)+int(mm.nameLen)]
					ftype, ftyp, typeLine = mm.mtype(), mm.typ, int32(i)
				}
				i = end + 1
				km++
				p.metaHits++
				continue
			}
		}
		if recall {
			st, se, h, memo = p.memo.recall(body, i, k)
		}
		if memo {
			// The series of the k-th line of the last exposition, already
			// validated: only its value is read. The scanner takes only
			// names written plainly: the name is the start of the series.
			nameEnd, seriesEnd = len(st.name), se-start
			// Most lines end in one blank and a float of the fast path,
			// then the newline: what that path reads is what sampleValue
			// would split off the line, and its end is the line's.
			f, n, exact := exactFloatPrefix(body[se+1:])
			if end := se + 1 + n; exact && (end == len(body) || body[end] == '\n') {
				line, i = body[start:end], end+1
				val, v, parsed = line[seriesEnd+1:], f, true
			} else {
				end := bytes.IndexByte(body[se:], '\n')
				if end < 0 {
					end = len(body)
				} else {
					end += se
				}
				line, i = body[start:end], end+1
				if val, ts, ok = sampleValue(line, seriesEnd); !ok || !validTimestamp(ts) {
					return recs, false
				}
			}
			p.touch(st)
			p.memo.renamed(k, st)
			p.cur = st
			last.series, last.nameEnd, last.n = line[:seriesEnd], nameEnd, 0
			p.hits++
		} else {
			end := bytes.IndexByte(body[i:], '\n')
			if end < 0 {
				end = len(body)
			} else {
				end += i
			}
			line, i = body[i:end], end+1
			if len(line) == 0 {
				continue
			}
			if bytes.IndexByte(line, 0) >= 0 {
				// Prometheus' lexer ends the exposition at a NUL byte. Lines
				// the memo recalls have none: their text is that of a line
				// checked here, and what follows a series is a float.
				return recs, false
			}
			c := line[0]
			if c == '#' {
				name, text, isType, ok := meta(line)
				if !ok {
					return recs, false
				}
				t := model.MetricTypeUnknown
				switch {
				case isType:
					if t, ok = metricType(text); !ok {
						return recs, false
					}
					family, ftype, ftyp, typeLine = name, t, typeIndex(t), int32(start)
				case name != nil && !utf8.Valid(text):
					return recs, false
				}
				p.memo.keepMeta(km, line, name, isType, t)
				km++
				continue
			}
			if !isNameStart(c) {
				return recs, false
			}
			var sameName bool
			nameEnd, seriesEnd, val, ts, sameName, ok = sampleLine(line, &last)
			if !ok || seriesEnd > MaxSeriesBytes || !validTimestamp(ts) {
				return recs, false
			}
			st = p.cur
			if !sameName || st == nil {
				st = p.name(line[:nameEnd])
			}
			h = hashSeries(line[:seriesEnd])
			p.memo.keep(k, h, st, seriesEnd)
			aligned = false
		}
		k++
		p.n++
		st.fold(h)
		if !st.wanted {
			if !parsed && !simpleFloat(val) {
				if _, err := parseFloat(val); err != nil {
					return recs, false
				}
			}
			continue
		}
		if !parsed {
			var err error
			if v, err = parseFloat(val); err != nil {
				return recs, false
			}
		}
		if math.IsNaN(v) {
			v = math.Float64frombits(value.NormalNaN)
		}
		// The type depends on the name and the # TYPE line in force only:
		// a run of lines of one name under one type line has one type.
		if st != typed.st || typeLine != typed.line {
			typed.st, typed.line, typed.typ = st, typeLine, 0 // unknown
			if belongs(line[:nameEnd], family, ftype) {
				typed.typ = ftyp
			}
		}
		typ := typed.typ
		recs = append(recs, record{start: int32(start), nameEnd: int32(start + nameEnd), seriesEnd: int32(start + seriesEnd), typeLine: typeLine, same: memo && aligned, typ: typ, value: v})
	}
	p.memo.lines, p.memo.metas = fit(p.memo.lines[:k]), fit(p.memo.metas[:km])
	p.memo.gen = p.gen
	return recs, true
}

// release gives the records back to the pool: they are needed only while
// one exposition is read, so their memory is that of the reads in flight.
func (p *Parser) release() {
	if r := p.fast.recs; r != nil && cap(*r) <= 1<<20 {
		*r = (*r)[:0]
		recordPool.Put(r)
	}
	p.fast = fastState{}
}

// visitScanned calls visit for the samples scan recorded.
func (p *Parser) visitScanned(body []byte, visit func(*Sample) error) error {
	defer p.release()
	p.fast.active, p.fast.body = true, body
	var s Sample
	for i := range *p.fast.recs {
		r := &(*p.fast.recs)[i]
		p.fast.rec = r
		s.Name = body[r.start:r.nameEnd]
		s.Series = body[r.start:r.seriesEnd]
		s.Type = metaTypes[r.typ]
		s.Value = r.value
		s.Same = r.same
		if err := visit(&s); err != nil {
			return err
		}
	}
	return nil
}

// labels parses the visited sample's line again with Prometheus' parser,
// after the # TYPE line in force for it (the type decides how le and
// quantile values are normalized), so its labels are exactly Prometheus'.
func (f *fastState) labels(l *labels.Labels) {
	r := f.rec
	line := f.body[r.start:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	var b []byte
	if r.typeLine >= 0 {
		tl := f.body[r.typeLine:]
		if i := bytes.IndexByte(tl, '\n'); i >= 0 {
			tl = tl[:i]
		}
		b = append(append(b, tl...), '\n')
	}
	b = append(append(b, line...), '\n')
	pp := textparse.NewPromParser(b, nil, false)
	for {
		et, err := pp.Next()
		if err != nil {
			*l = labels.EmptyLabels() // not reached: scan accepted the line
			return
		}
		if et == textparse.EntrySeries {
			pp.Labels(l)
			return
		}
	}
}

// meta reads a line starting with '#'. A comment gives a nil name; a HELP
// or TYPE line gives the name and the text. ok is false for lines the
// scanner leaves to Prometheus' parser.
func meta(line []byte) (name, text []byte, isType, ok bool) {
	k := 1
	for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
		k++
	}
	rest := line[k:]
	if k == 1 || len(rest) < 5 || (rest[4] != ' ' && rest[4] != '\t') {
		return nil, nil, false, true
	}
	switch string(rest[:4]) {
	case "HELP":
	case "TYPE":
		isType = true
	default:
		return nil, nil, false, true
	}
	k += 4
	for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
		k++
	}
	ns := k
	if k == len(line) || !isNameStart(line[k]) {
		return nil, nil, false, false
	}
	for k < len(line) && isNameChar(line[k]) {
		k++
	}
	name = line[ns:k]
	rest = line[k:]
	// The text is the rest of the line after one blank; a rest of blanks
	// only is lexed as whitespace, not as text.
	if len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') || len(bytes.Trim(rest, " \t")) == 0 {
		return nil, nil, false, false
	}
	return name, rest[1:], isType, true
}

func metricType(text []byte) (model.MetricType, bool) {
	switch string(text) {
	case "counter":
		return model.MetricTypeCounter, true
	case "gauge":
		return model.MetricTypeGauge, true
	case "histogram":
		return model.MetricTypeHistogram, true
	case "summary":
		return model.MetricTypeSummary, true
	case "untyped":
		return model.MetricTypeUnknown, true
	}
	return "", false
}

// prior is the series of the sample line scanned last in a body, with the
// offsets where its label pairs start. Lines of one family repeat most of
// their neighbours' text (the name, labels such as model_name), and where
// a label pair starts the scanner's state does not depend on what came
// before: text equal to the part of the prior series that was accepted
// from such a point on is accepted again without being walked.
type prior struct {
	series  []byte // name and label set, a slice of the body
	nameEnd int
	pairs   [maxPairs]int32 // offsets in series where label pair i starts
	n       int             // pairs recorded
}

// maxPairs bounds the label pairs a prior records; later ones are walked.
const maxPairs = 8

// sampleLine splits a sample line that starts with a name character. last
// is the previous sample line of the body; it is replaced by this one when
// the line is accepted.
func sampleLine(line []byte, last *prior) (nameEnd, seriesEnd int, val, ts []byte, sameName, ok bool) {
	var cur prior
	k := 1
	if n := last.nameEnd; n > 0 && len(line) > n && !isNameChar(line[n]) && bytes.Equal(line[:n], last.series[:n]) {
		k, sameName = n, true
	} else {
		for k < len(line) && isNameChar(line[k]) {
			k++
		}
	}
	nameEnd = k
	if k < len(line) && line[k] == '{' {
		if k, ok = labelSet(line, k+1, last, &cur); !ok {
			return
		}
	}
	seriesEnd = k
	if val, ts, ok = sampleValue(line, k); !ok {
		return 0, 0, nil, nil, false, false
	}
	cur.series, cur.nameEnd = line[:seriesEnd], nameEnd
	*last = cur
	return nameEnd, seriesEnd, val, ts, sameName, true
}

// sampleValue splits the rest of a sample line after its series at k: the
// value and the timestamp, if any.
func sampleValue(line []byte, k int) (val, ts []byte, ok bool) {
	k = skipBlanks(line, k)
	vs := k
	for k < len(line) && line[k] != ' ' && line[k] != '\t' && line[k] != '{' {
		k++
	}
	if k == vs || k < len(line) && line[k] == '{' {
		return nil, nil, false
	}
	val = line[vs:k]
	k = skipBlanks(line, k)
	if k == len(line) {
		return val, nil, true
	}
	ts0 := k
	for k < len(line) && line[k] >= '0' && line[k] <= '9' {
		k++
	}
	if k == ts0 || skipBlanks(line, k) != len(line) {
		return nil, nil, false
	}
	return val, line[ts0:k], true
}

// labelSet reads the labels after '{' and returns the offset after '}'.
// It records where cur's label pairs start, and takes the rest of the set
// as read when it equals what last accepted from the same pair on.
func labelSet(line []byte, k int, last, cur *prior) (int, bool) {
	for i := 0; ; i++ {
		if i < maxPairs {
			cur.pairs[i], cur.n = int32(k), i+1
		}
		if i < last.n {
			cp := last.pairs[i]
			tail := last.series[cp:]
			if len(line)-k > len(tail) && bytes.Equal(line[k:k+len(tail)], tail) {
				for m := i + 1; m < last.n; m++ {
					cur.pairs[m] = last.pairs[m] - cp + int32(k)
				}
				cur.n = last.n
				return k + len(tail), true
			}
		}
		k = skipBlanks(line, k)
		if k == len(line) {
			return 0, false
		}
		switch c := line[k]; {
		case c == '}':
			return k + 1, true
		case !isLabelStart(c):
			return 0, false
		}
		for k < len(line) && isLabelChar(line[k]) {
			k++
		}
		k = skipBlanks(line, k)
		if k == len(line) || line[k] != '=' {
			return 0, false
		}
		k = skipBlanks(line, k+1)
		if k == len(line) || line[k] != '"' {
			return 0, false
		}
		j, ok := labelValue(line, k+1)
		if !ok {
			return 0, false
		}
		k = skipBlanks(line, j+1)
		if k < len(line) && line[k] == ',' {
			k++
		}
	}
}

// labelValue reads a label value starting after its opening quote and
// returns the offset of the closing quote. Short values are walked; the
// rest of a long one is searched with IndexByte, and a value with a
// backslash is walked by labelValueEscaped.
func labelValue(line []byte, k int) (int, bool) {
	j := k
	var high byte
	for end := min(len(line), k+16); j < end; j++ {
		switch c := line[j]; c {
		case '"':
			return j, high < utf8.RuneSelf || utf8.Valid(line[k:j])
		case '\\':
			return labelValueEscaped(line, k)
		default:
			high |= c
		}
	}
	q := bytes.IndexByte(line[j:], '"')
	if q < 0 {
		return 0, false // unterminated on this line
	}
	if bytes.IndexByte(line[j:j+q], '\\') >= 0 {
		return labelValueEscaped(line, k)
	}
	return j + q, utf8.Valid(line[k : j+q])
}

// labelValueEscaped is labelValue for a value with escapes: a backslash
// takes the next byte with it, so an escaped quote does not end the value.
func labelValueEscaped(line []byte, k int) (int, bool) {
	j := k
	var high byte
	for j < len(line) && line[j] != '"' {
		if line[j] == '\\' {
			j++
			if j == len(line) {
				break
			}
		}
		high |= line[j]
		j++
	}
	if j >= len(line) {
		return 0, false // unterminated on this line
	}
	if high >= utf8.RuneSelf && !utf8.Valid(line[k:j]) {
		return 0, false
	}
	return j, true
}

func skipBlanks(b []byte, k int) int {
	for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
		k++
	}
	return k
}

// Character classes of Prometheus' lexer: names are [a-zA-Z_:][a-zA-Z0-9_:]*,
// label names [a-zA-Z_][a-zA-Z0-9_]*.
const (
	cNameStart = 1 << iota
	cName
	cLabelStart
	cLabel
)

var class = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		digit := c >= '0' && c <= '9'
		if letter || c == ':' {
			t[c] |= cNameStart | cName
		}
		if digit {
			t[c] |= cName | cLabel
		}
		if letter {
			t[c] |= cLabelStart | cLabel
		}
	}
	return t
}()

func isNameStart(c byte) bool  { return class[c]&cNameStart != 0 }
func isNameChar(c byte) bool   { return class[c]&cName != 0 }
func isLabelStart(c byte) bool { return class[c]&cLabelStart != 0 }
func isLabelChar(c byte) bool  { return class[c]&cLabel != 0 }

// validTimestamp: digits that fit an int64 (at most 18 of them; longer
// ones are left to Prometheus' parser, which refuses an overflow).
func validTimestamp(ts []byte) bool { return len(ts) <= 18 }

// simpleFloat reports whether b is a decimal float that strconv.ParseFloat
// accepts without overflow: [+-]digits[.digits][e[+-]d[d]], at most 32
// bytes. Other spellings (NaN, +Inf, hex) are checked by parsing them.
func simpleFloat(b []byte) bool {
	if len(b) == 0 || len(b) > 32 {
		return false
	}
	k := 0
	if b[0] == '+' || b[0] == '-' {
		k++
	}
	d := k
	for k < len(b) && b[k] >= '0' && b[k] <= '9' {
		k++
	}
	if k == d {
		return false
	}
	if k < len(b) && b[k] == '.' {
		k++
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
	}
	if k < len(b) && (b[k] == 'e' || b[k] == 'E') {
		k++
		if k < len(b) && (b[k] == '+' || b[k] == '-') {
			k++
		}
		e := k
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k == e || k-e > 2 {
			return false
		}
	}
	return k == len(b)
}

// parseFloat is Prometheus' textparse.parseFloat: Go's ParseFloat without
// the spellings Go added in 1.13 (hex mantissas' p exponents, underscores).
func parseFloat(b []byte) (float64, error) {
	if f, ok := exactFloat(b); ok {
		return f, nil
	}
	s := unsafeString(b)
	if !simpleFloat(b) && strings.ContainsAny(s, "pP_") {
		return 0, errUnsupportedFloat
	}
	return strconv.ParseFloat(s, 64)
}

var errUnsupportedFloat = strconv.ErrSyntax

func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
