package parse

import (
	"hash/maphash"
	"math"
	"slices"

	"github.com/prometheus/common/model"
)

// lineMemo is what the scanner keeps of one sample line of the last
// exposition it accepted, by the line's ordinal among the sample lines.
// Expositions of one target list the same series in the same order from
// scrape to scrape, only the values change; a line whose series text
// hashes to the memo's at its ordinal is taken for the series already
// validated there, so the scanner skips walking its name and labels and
// looking up its name, and reads only its value.
//
// The memo keeps 32 bits of the series' 64-bit hash: a line it takes for
// the wrong series is still folded into its name's digest with its own
// 64-bit hash, so the digests differ from the checked ones and the body
// is read by Prometheus' parser (Parse). Those digests identify series by
// a 64-bit keyed hash, as Prometheus' head does by the 64-bit hash of the
// labels (Labels.Hash in
// https://github.com/prometheus/prometheus/blob/v3.5.0/model/labels/labels_stringlabels.go):
// the seed is random per process and unknown to the target, so a
// collision is a 2^-64 chance per line, not something a body can aim at.
// Keeping the text itself instead would hold every target's last body.
type lineMemo struct {
	hash   uint32 // the low half of the series text's hashSeries
	series uint16 // length of the series text; 0: not memoized
	name   uint16 // index of the name's state in the last exposition's names
}

// memo is the scanner's memory of the last exposition it accepted. It
// costs 8 bytes per sample line of a target and 24 per comment line.
type memo struct {
	lines []lineMemo
	metas []metaMemo   // the comment lines, by ordinal among them
	names []*nameState // the names of that exposition, in order of first use
	gen   uint32       // the parser's generation that read it; 0 none
}

// hashSeries is the hash of a series text, the one both the memo and the
// duplicate digests use.
func hashSeries(series []byte) uint64 { return maphash.Bytes(digestSeed, series) }

// recall returns the name state of the k-th sample line of the last
// exposition when the line starting at body[i] has its series: same text,
// followed by a blank. end is the offset after the series, h its hash.
func (m *memo) recall(body []byte, i, k int) (st *nameState, end int, h uint64, ok bool) {
	if k >= len(m.lines) || !isNameStart(body[i]) {
		return nil, 0, 0, false
	}
	lm := m.lines[k]
	end = i + int(lm.series)
	if lm.series == 0 || end >= len(body) || body[end] != ' ' && body[end] != '\t' {
		return nil, 0, 0, false
	}
	h = hashSeries(body[i:end])
	if uint32(h) != lm.hash {
		return nil, 0, 0, false
	}
	return m.names[lm.name], end, h, true
}

// keep records the k-th sample line of the exposition being scanned.
func (m *memo) keep(k int, h uint64, st *nameState, seriesLen int) {
	lm := lineMemo{hash: uint32(h)}
	if seriesLen <= math.MaxUint16 && st.idx <= math.MaxUint16 {
		lm.series, lm.name = uint16(seriesLen), uint16(st.idx)
	}
	if k < len(m.lines) {
		m.lines[k] = lm
		return
	}
	m.lines = append(m.lines, lm)
}

// renamed updates the k-th line's memo, recalled for this exposition, to
// the index its name has in this exposition's names.
func (m *memo) renamed(k int, st *nameState) {
	if lm := &m.lines[k]; uint32(lm.name) != st.idx {
		if st.idx > math.MaxUint16 {
			lm.series = 0
		}
		lm.name = uint16(st.idx)
	}
}

// metaMemo is what the scanner keeps of one comment line (# HELP, # TYPE
// or another comment) of the last exposition it accepted, by the line's
// ordinal among the comment lines: the same text is read the same way.
// It keeps the whole 64-bit hash: no digest checks a comment line.
type metaMemo struct {
	hash             uint64 // maphash of the whole line
	len              uint32 // its length; 0: not memoized
	nameOff, nameLen uint16 // a # TYPE line's name in it; nameLen 0: no # TYPE line
	typ              uint8  // a # TYPE line's type, an index in metaTypes
}

var metaTypes = [...]model.MetricType{
	model.MetricTypeUnknown, model.MetricTypeCounter, model.MetricTypeGauge,
	model.MetricTypeHistogram, model.MetricTypeSummary,
}

func (mm metaMemo) mtype() model.MetricType { return metaTypes[mm.typ] }

// typeIndex returns the index of t in metaTypes.
func typeIndex(t model.MetricType) uint8 {
	for i, mt := range metaTypes {
		if mt == t {
			return uint8(i)
		}
	}
	return 0
}

// recallMeta returns the memo of the k-th comment line of the last
// exposition when the line starting at body[i] is the same text; end is
// the offset of the line's end.
func (m *memo) recallMeta(body []byte, i, k int) (mm metaMemo, end int, ok bool) {
	if k >= len(m.metas) {
		return mm, 0, false
	}
	mm = m.metas[k]
	end = i + int(mm.len)
	if mm.len == 0 || end > len(body) || end < len(body) && body[end] != '\n' {
		return mm, 0, false
	}
	return mm, end, maphash.Bytes(digestSeed, body[i:end]) == mm.hash
}

// keepMeta records the k-th comment line of the exposition being
// scanned; name is a # HELP or # TYPE line's name, a slice of line.
func (m *memo) keepMeta(k int, line, name []byte, isType bool, t model.MetricType) {
	mm := metaMemo{hash: maphash.Bytes(digestSeed, line)}
	if len(line) <= math.MaxUint32 {
		mm.len = uint32(len(line))
	}
	if isType {
		off := cap(line) - cap(name) // name is line[off:off+len(name)]
		mm.typ = typeIndex(t)
		if off > math.MaxUint16 || len(name) == 0 || len(name) > math.MaxUint16 {
			mm.len = 0
		}
		mm.nameOff, mm.nameLen = uint16(off), uint16(len(name))
	}
	if k < len(m.metas) {
		m.metas[k] = mm
		return
	}
	m.metas = append(m.metas, mm)
}

// fit returns s in a slice of about its length: the memo is kept between
// scrapes, so the room appending left (up to double the lines) or that a
// longer exposition once needed would cost every target all the time.
func fit[T any](s []T) []T {
	if cap(s)-len(s) <= len(s)/8+16 {
		return s
	}
	return slices.Clone(s)
}
