package history

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/ptdmon/ptdmon/internal/ledger/point"
)

// SegmentPoints is how many cold points a segment holds: the blocks of the
// newest cold points wait as blocks until this many have gathered, then are
// encoded together. Each row's first point in a segment is written in full,
// so a longer segment spreads that cost thinner; the blocks waiting cost
// about 145 bytes per instance-point against the segment's 70 or fewer.
const SegmentPoints = 64

// segment is the per-instance detail of consecutive cold points, encoded
// as in a time-series database's chunk: each row of the points (the i-th
// InstancePoint of each) is one byte stream across the points, and every
// value is written as its difference from the row's previous one. A value
// equal to the previous one costs a bit; a changed float is the XOR of its
// bits with the previous value's, without its zero bytes at either end
// (Gorilla's idea, at byte granularity); window times are varints of their
// delta of delta; names and reasons are codes into the history's tables,
// written again only when they change. Decoding is exact: every bit of
// every float, every nanosecond and zone of every time.
//
// A segment never changes once built: readers decode it outside the
// ledger's lock.
type segment struct {
	n       []uint32 // per point: its number of rows
	data    []byte   // the rows' streams, one after another
	rowOff  []uint32 // row r's stream is data[rowOff[r]:rowOff[r+1]]
	ids     []uint32 // the instance codes row r ever holds: ids[idsOff[r]:idsOff[r+1]]
	idsOff  []uint32
	reasons []uint32 // every reason code the segment uses, once each
	live    int      // points still holding their detail here
}

// A row's header byte says whether the instance was up, whether its
// names, zone, absent series or reasons differ from the row's previous
// point, and (bits 2–5) which of the row's previous 15 points' WindowTo its
// WindowFrom equals, if any: a window starts at a sample an earlier point
// ended at, so a byte of the header stands for a varint of 3–4 bytes.
// Bits 6–7 are the instance's sleep code (columns.go's sleepCode), 0 in
// segments written before there was one.
const (
	rowUp      = 1
	rowMeta    = 2
	rowFromRef = 2 // shift of the WindowFrom reference
	fromRefs   = 16
	rowSleep   = 6 // shift of the sleep code
)

// rowState is what a row's next point is written against.
type rowState struct {
	id, zone uint32
	absent   absentMask
	why      []uint32
	to, d    int64 // previous WindowTo and its delta
	span     int64 // previous WindowTo − WindowFrom
	vals     [numSeries]uint64
	started  bool
	tos      [fromRefs]int64 // the WindowTo of point k of the row at tos[k%fromRefs]
	k        int             // points of the row so far
}

// fromRef returns j when from equals the WindowTo of the row's j-th previous
// point (1 ≤ j < fromRefs), or 0.
func (st *rowState) fromRef(from int64) int {
	for j := 1; j < fromRefs && j <= st.k; j++ {
		if st.tos[(st.k-j)%fromRefs] == from {
			return j
		}
	}
	return 0
}

// pushTo notes the row's newest WindowTo.
func (st *rowState) pushTo(to int64) {
	st.tos[st.k%fromRefs] = to
	st.k++
}

// seal encodes blocks, the cold points' detail oldest first, as one
// segment, taking a reference on every name and reason it uses; the blocks
// keep theirs until released.
func (c *columns) seal(blocks []*block) *segment {
	seg := &segment{n: make([]uint32, len(blocks)), live: len(blocks)}
	rows := 0
	// whyAt[k][r] is where block k's reasons of row r start in its why.
	whyAt := make([][]int32, len(blocks))
	for k, b := range blocks {
		seg.n[k] = uint32(len(b.inst))
		rows = max(rows, len(b.inst))
		at := make([]int32, len(b.inst))
		w := 0
		for r, a := range b.absent {
			at[r] = int32(w)
			w += bits.OnesCount16(uint16(a))
		}
		whyAt[k] = at
	}
	seg.rowOff = make([]uint32, rows+1)
	seg.idsOff = make([]uint32, rows+1)
	var st rowState
	seenWhy := map[uint32]bool{}
	for r := 0; r < rows; r++ {
		st = rowState{why: st.why[:0]}
		firstID := len(seg.ids)
		for k, b := range blocks {
			if r >= len(b.inst) {
				continue
			}
			seg.data = st.put(seg.data, b, r, int(whyAt[k][r]))
			if !containsID(seg.ids[firstID:], st.id) {
				seg.ids = append(seg.ids, st.id)
				c.instances.refs[st.id]++
			}
			for _, w := range st.why {
				if !seenWhy[w] {
					seenWhy[w] = true
					seg.reasons = append(seg.reasons, w)
					c.reasons.refs[w]++
				}
			}
		}
		seg.rowOff[r+1] = uint32(len(seg.data))
		seg.idsOff[r+1] = uint32(len(seg.ids))
	}
	// Sized once for the life of the segment: no spare capacity kept.
	seg.data = append([]byte(nil), seg.data...)
	seg.ids = append([]uint32(nil), seg.ids...)
	return seg
}

func containsID(ids []uint32, id uint32) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}

// put appends row r of b, whose reasons start at b.why[w], to dst, written
// against st, and moves st on.
func (st *rowState) put(dst []byte, b *block, r, w int) []byte {
	n := len(b.inst)
	why := b.why[w : w+bits.OnesCount16(uint16(b.absent[r]))]

	id, zone, absent := b.inst[r], uint32((b.flags[r]>>flagZone)%maxZones), b.absent[r]
	var h byte
	if b.flags[r]&flagUp != 0 {
		h |= rowUp
	}
	h |= byte((b.flags[r]>>flagSleep)%sleepCodes) << rowSleep
	meta := !st.started || id != st.id || zone != st.zone || absent != st.absent || !equalCodes(why, st.why)
	if meta {
		h |= rowMeta
	}
	to, from := b.to[r], b.from[r]
	ref := st.fromRef(from)
	h |= byte(ref) << rowFromRef
	dst = append(dst, h)
	if meta {
		st.id, st.zone, st.absent = id, zone, absent
		st.why = append(st.why[:0], why...)
		dst = binary.AppendUvarint(dst, uint64(id))
		dst = append(dst, byte(zone))
		dst = binary.AppendUvarint(dst, uint64(absent))
		for _, c := range why {
			dst = binary.AppendUvarint(dst, uint64(c))
		}
	}
	st.started = true

	// Window times: the delta of delta of WindowTo, and unless the header
	// refers to an earlier WindowTo, the change of the window's span. Both
	// wrap around int64 as they are decoded.
	d := to - st.to
	dst = binary.AppendVarint(dst, d-st.d)
	st.to, st.d = to, d
	span := to - from
	if ref == 0 {
		dst = binary.AppendVarint(dst, span-st.span)
	}
	st.span = span
	st.pushTo(to)

	// Which present values changed, then each changed one's XOR.
	var changed uint64
	var xor [numSeries]uint64
	for s := 0; s < numSeries; s++ {
		if absent&(1<<s) != 0 {
			continue
		}
		v := math.Float64bits(b.vals[s*n+r])
		if x := v ^ st.vals[s]; x != 0 {
			changed |= 1 << s
			xor[s] = x
			st.vals[s] = v
		}
	}
	dst = binary.AppendUvarint(dst, changed)
	for s := 0; s < numSeries; s++ {
		if changed&(1<<s) != 0 {
			dst = putXOR(dst, xor[s])
		}
	}
	return dst
}

func equalCodes(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// putXOR appends x (not 0) without its zero bytes at either end: a byte of
// the trailing zero bytes' count and the length, then the bytes, low first.
func putXOR(dst []byte, x uint64) []byte {
	trail := bits.TrailingZeros64(x) / 8
	x >>= 8 * trail
	n := (bits.Len64(x) + 7) / 8
	dst = append(dst, byte(trail<<4|n))
	for ; n > 0; n-- {
		dst = append(dst, byte(x))
		x >>= 8
	}
	return dst
}

// release drops the segment's references on names and reasons.
func (c *columns) releaseSegment(seg *segment) {
	for _, id := range seg.ids {
		c.instances.unref(id)
	}
	for _, r := range seg.reasons {
		c.reasons.unref(r)
	}
}

// segReader decodes a segment's points in order, for one window's read.
type segReader struct {
	seg  *segment
	next int // the point the rows decode next
	rows []rowCursor
}

type rowCursor struct {
	rowState
	off   uint32
	want  bool // the read needs this row
	up    bool
	sleep uint8 // the sleep code
}

// newSegReader reads seg; with target set, only the rows that ever hold
// that instance are decoded.
func (c *columns) newSegReader(seg *segment, target string) *segReader {
	rd := &segReader{seg: seg, rows: make([]rowCursor, len(seg.rowOff)-1)}
	// One array holds every row's reason codes: a row has at most one per series.
	why := make([]uint32, len(rd.rows)*numSeries)
	for r := range rd.rows {
		rc := &rd.rows[r]
		rc.why = why[r*numSeries : r*numSeries : (r+1)*numSeries]
		rc.off = seg.rowOff[r]
		rc.want = target == ""
		for _, id := range seg.ids[seg.idsOff[r]:seg.idsOff[r+1]] {
			rc.want = rc.want || c.instances.get(id).target == target
		}
	}
	return rd
}

// point returns the InstancePoints of the segment's point k (not before
// the last one read), or only the one of target when it is set.
func (rd *segReader) point(c *columns, k int, target string) []point.InstancePoint {
	for ; rd.next < k; rd.next++ {
		for r := 0; r < int(rd.seg.n[rd.next]); r++ {
			if rd.rows[r].want {
				rd.rows[r].step(rd.seg.data)
			}
		}
	}
	n := int(rd.seg.n[k])
	var out []point.InstancePoint
	if target == "" {
		out = make([]point.InstancePoint, n)
	}
	for r := 0; r < n; r++ {
		rc := &rd.rows[r]
		if !rc.want {
			continue
		}
		rc.step(rd.seg.data)
		if target != "" {
			if c.instances.get(rc.id).target != target {
				continue
			}
			out = make([]point.InstancePoint, 1)
			rc.fill(c, &out[0])
			continue
		}
		rc.fill(c, &out[r])
	}
	rd.next = k + 1
	return out
}

// step decodes the row's next point into its state.
func (rc *rowCursor) step(data []byte) {
	o := rc.off
	h := data[o]
	o++
	rc.up = h&rowUp != 0
	rc.sleep = h >> rowSleep
	uv := func() uint64 {
		v, n := binary.Uvarint(data[o:])
		o += uint32(n)
		return v
	}
	if h&rowMeta != 0 {
		rc.id = uint32(uv())
		rc.zone = uint32(data[o])
		o++
		rc.absent = absentMask(uv())
		rc.why = rc.why[:0]
		for i := bits.OnesCount16(uint16(rc.absent)); i > 0; i-- {
			rc.why = append(rc.why, uint32(uv()))
		}
	}
	v, n := binary.Varint(data[o:])
	o += uint32(n)
	rc.d += v
	rc.to += rc.d
	if ref := int(h>>rowFromRef) % fromRefs; ref != 0 {
		rc.span = rc.to - rc.tos[(rc.k-ref)%fromRefs]
	} else {
		v, n = binary.Varint(data[o:])
		o += uint32(n)
		rc.span += v
	}
	rc.pushTo(rc.to)
	changed := uv()
	for s := 0; s < numSeries; s++ {
		if changed&(1<<s) == 0 {
			continue
		}
		hb := data[o]
		o++
		trail, n := hb>>4, int(hb&15)
		var x uint64
		for i := n - 1; i >= 0; i-- {
			x = x<<8 | uint64(data[o+uint32(i)])
		}
		o += uint32(n)
		rc.vals[s] ^= x << (8 * trail)
	}
	rc.off = o
}

// fill writes the row's current point into p.
func (rc *rowCursor) fill(c *columns, p *point.InstancePoint) {
	k := c.instances.get(rc.id)
	p.Target, p.Role, p.Engine, p.Pool = k.target, k.role, k.engine, k.pool
	p.Up = rc.up
	p.WaitingDeferred = point.Absent(point.WhyNotKeptDetail)
	p.Sleep = sleepStates[rc.sleep%sleepCodes]
	loc := c.zones[rc.zone]
	p.WindowFrom, p.WindowTo = fromUnixNano(rc.to-rc.span, loc), fromUnixNano(rc.to, loc)
	w := 0
	for s, f := range instanceSeries {
		v := f(p)
		if rc.absent&(1<<s) != 0 {
			v.Why = c.reasons.get(rc.why[w])
			w++
			continue
		}
		v.V = math.Float64frombits(rc.vals[s])
	}
}
