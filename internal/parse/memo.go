package parse

import (
	"hash/maphash"
	"math"
)

// lineMemo is what the scanner keeps of one sample line of the last
// exposition it accepted, by the line's ordinal among the sample lines.
// Expositions of one target list the same series in the same order from
// scrape to scrape, only the values change; a line whose series text
// hashes to the memo's at its ordinal is the series already validated
// there, so the scanner skips walking its name and labels and looking up
// its name, and reads only its value.
//
// The series text is identified by a 64-bit keyed hash, as Prometheus
// identifies a series by the 64-bit hash of its labels
// (https://github.com/prometheus/prometheus/blob/v3.5.0/model/labels/labels_common.go):
// the seed is random per process and unknown to the target, so a
// collision is a 2^-64 chance per line, not something a body can aim at.
// Keeping the text itself instead would hold every target's last body.
type lineMemo struct {
	hash    uint64 // maphash of the series text with digestSeed
	name    uint32 // index of the name's state in the last exposition's names
	series  uint16 // length of the series text; 0: not memoized
	nameEnd uint16 // length of the name
}

// memo is the scanner's memory of the last exposition it accepted. It
// costs 16 bytes per sample line of a target.
type memo struct {
	lines []lineMemo
	names []*nameState // the names of that exposition, in order of first use
	gen   uint32       // the parser's generation that read it; 0 none
}

// hashSeries is the hash of a series text, the one both the memo and the
// duplicate digests use.
func hashSeries(series []byte) uint64 { return maphash.Bytes(digestSeed, series) }

// recall returns the memo of the k-th sample line of the last exposition
// when the line starting at body[i] has its series: same text, followed by
// a blank. end is the offset after the series, h its hash.
func (m *memo) recall(body []byte, i, k int) (lm lineMemo, end int, h uint64, ok bool) {
	if k >= len(m.lines) || !isNameStart(body[i]) {
		return lm, 0, 0, false
	}
	lm = m.lines[k]
	end = i + int(lm.series)
	if lm.series == 0 || end >= len(body) || body[end] != ' ' && body[end] != '\t' {
		return lm, 0, 0, false
	}
	h = hashSeries(body[i:end])
	return lm, end, h, h == lm.hash
}

// keep records the k-th sample line of the exposition being scanned.
func (m *memo) keep(k int, h uint64, st *nameState, seriesLen, nameEnd int) {
	lm := lineMemo{hash: h, name: st.idx}
	if seriesLen <= math.MaxUint16 {
		lm.series, lm.nameEnd = uint16(seriesLen), uint16(nameEnd)
	}
	if k < len(m.lines) {
		m.lines[k] = lm
		return
	}
	m.lines = append(m.lines, lm)
}
