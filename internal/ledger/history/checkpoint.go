package history

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger/point"
)

// A checkpoint is a run of the history's points, handed out once they left
// the hot tail and their detail was sealed into a segment (segment.go): the
// points' deployment-wide values, the segment's bytes as the history
// encoded them and the entries of the tables (names, reasons, zones) its
// codes refer to. A recording keeps them beside its inputs so that a
// resume restores the points rather than recomputing them from the inputs
// (docs/runs.md#resume): restoring costs a decode of the segment, about
// what a read of the history costs, however the points were computed.
//
// A piece is self-contained: a header (magic, version, the configuration
// key, the number of points and the first and last point's time) that can
// be read without decoding the rest, then the rest as gob.

// CheckpointVersion changes with any change of a piece's layout or of the
// segments' encoding; a piece of another version is not restored, but for
// versions 1 to 3: version 1's points lack the stages' work (busy
// instances, decode batch, link busy time), version 2's decode's step
// time, version 3's the routers' phases and migrations; they are restored
// with those absent.
const CheckpointVersion = 4

// whyEarlierPiece is the reason of the values a version-1 piece lacks.
const whyEarlierPiece = "not kept by the version of ptdmon that recorded this point"

var checkpointMagic = [4]byte{'p', 't', 'd', 'c'}

// ErrCheckpointMismatch says that pieces were computed by a ledger
// configured otherwise than the one asked to restore them (or by another
// version): their points are not what this ledger would compute.
var ErrCheckpointMismatch = errors.New("checkpoint of another ledger configuration or version")

// CheckpointHeader is what a piece says of itself before it is decoded.
type CheckpointHeader struct {
	Version     byte
	Key         uint64 // CheckpointKey of the ledger that computed the points
	Points      int
	First, Last time.Time
}

// ckptPiece is a piece's body.
type ckptPiece struct {
	Points  []point.Point // without Instances
	Seg     []int32       // per point: its segment in Segs, -1 when it has no detail
	Idx     []int32       // per point: its index in that segment
	Segs    []ckptSegment
	Names   []ckptName
	Reasons []ckptReason
	Zones   []ckptZone // the history's time zones by index
}

// whyNotKept is the reason of a value a piece kept before the value existed.
const whyNotKept = "not kept by the recording this point was restored from (an earlier version)"

// withoutShed marks what a version-1 piece's point did not keep of load shed
// before the engine and the stages' waiting by reason as absent, not 0.
func withoutShed(p *point.Point) {
	n := point.Absent(whyNotKept)
	waiting := point.WaitingReasons{Capacity: n, Deferred: n}
	p.Prefill.WaitingBy, p.Decode.WaitingBy = waiting, waiting
	p.Router.Shed = n
	for k := range p.Routers {
		p.Routers[k].Shed = n
	}
	for k := range p.Pools {
		pp := &p.Pools[k]
		pp.Router.Shed = n
		pp.Prefill.WaitingBy, pp.Decode.WaitingBy = waiting, waiting
		pp.Failures.Shed = point.FailureRate{PerSecond: n, Ratio: n}
	}
}

// ckptZone is a time zone by name, with its offset for a zone that no
// name loads (a fixed zone).
type ckptZone struct {
	Name   string
	Offset int
}

type ckptSegment struct {
	N, RowOff, IDs, IDsOff, Reasons []uint32
	Data                            []byte
}

type ckptName struct {
	Code                       uint32
	Target, Role, Engine, Pool string
}

type ckptReason struct {
	Code uint32
	Text string
}

// KeepCheckpoints makes Ready hand out every point appended from now on
// once it is sealed.
func (h *History) KeepCheckpoints() {
	h.ckpt = true
	h.ckptNext = h.seq + 1
}

// CheckpointAll makes the next Ready hand out every stored point that is
// ready again, restored ones included.
func (h *History) CheckpointAll() {
	h.ckpt = true
	h.ckptNext = 0
}

// Pending are the pieces Ready collected, to be encoded outside the lock.
type Pending struct{ pieces []ckptPiece }

// Encode encodes the pieces, each with the configuration key key: nil
// when there are none; on an error, the pieces encoded before it.
func (p Pending) Encode(key uint64) ([][]byte, error) {
	if len(p.pieces) == 0 {
		return nil, nil
	}
	out := make([][]byte, 0, len(p.pieces))
	for i := range p.pieces {
		b, err := p.pieces[i].encode(key)
		if err != nil {
			return out, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Ready collects the points that left the hot tail and whose detail is
// sealed (or that have none), from ckptNext on, and moves ckptNext past
// them. A point still held as a block ends the run: its segment comes.
func (h *History) Ready() Pending {
	if !h.ckpt || h.count == 0 {
		return Pending{}
	}
	first := h.seq - uint64(h.count) + 1 // the oldest stored point's seq
	// Points that left the ring before they were ready are lost to the
	// checkpoint: they are older than any history would keep.
	h.ckptNext = max(h.ckptNext, first)
	var out []ckptPiece
	var cur *segment // the segment of the last piece, nil before its first
	for i := int(h.ckptNext - first); i < h.count-h.hot; i++ {
		s := h.at(i)
		if s.cold != nil {
			break
		}
		if len(out) == 0 || s.seg != nil && cur != nil && s.seg != cur {
			out = append(out, ckptPiece{})
			cur = nil
		}
		pc := &out[len(out)-1]
		p := s.point()
		p.Instances = nil
		pc.Points = append(pc.Points, p)
		if s.seg == nil {
			pc.Seg, pc.Idx = append(pc.Seg, -1), append(pc.Idx, 0)
		} else {
			if cur == nil {
				cur = s.seg
				pc.addSegment(&h.cols, s.seg)
			}
			pc.Seg, pc.Idx = append(pc.Seg, 0), append(pc.Idx, int32(s.segIdx))
		}
		h.ckptNext = s.seq + 1
	}
	return Pending{out}
}

// addSegment adds seg to the piece with the table entries its codes refer
// to, copied now: a code may mean another name once its last user left.
func (pc *ckptPiece) addSegment(c *columns, seg *segment) {
	// The segment never changes: its arrays are shared, not copied.
	pc.Segs = append(pc.Segs, ckptSegment{N: seg.n, Data: seg.data, RowOff: seg.rowOff, IDs: seg.ids, IDsOff: seg.idsOff, Reasons: seg.reasons})
	seen := make(map[uint32]bool, len(seg.ids))
	for _, id := range seg.ids {
		if !seen[id] {
			seen[id] = true
			k := c.instances.get(id)
			pc.Names = append(pc.Names, ckptName{id, k.target, k.role, k.engine, k.pool})
		}
	}
	for _, r := range seg.reasons {
		pc.Reasons = append(pc.Reasons, ckptReason{r, c.reasons.get(r)})
	}
	pc.Zones = pc.Zones[:0]
	for _, z := range c.zones {
		_, off := time.Unix(0, 0).In(z).Zone()
		pc.Zones = append(pc.Zones, ckptZone{z.String(), off})
	}
}

func (pc *ckptPiece) encode(key uint64) ([]byte, error) {
	var buf bytes.Buffer
	buf.Write(checkpointMagic[:])
	buf.WriteByte(CheckpointVersion)
	var hdr []byte
	hdr = binary.LittleEndian.AppendUint64(hdr, key)
	hdr = binary.AppendUvarint(hdr, uint64(len(pc.Points)))
	hdr = binary.AppendVarint(hdr, pc.Points[0].Time.UnixNano())
	hdr = binary.AppendVarint(hdr, pc.Points[len(pc.Points)-1].Time.UnixNano())
	buf.Write(hdr)
	if err := gob.NewEncoder(&buf).Encode(pc); err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return buf.Bytes(), nil
}

// ParseCheckpointHeader reads a piece's header and returns the rest.
func ParseCheckpointHeader(b []byte) (CheckpointHeader, []byte, error) {
	var h CheckpointHeader
	if len(b) < 5+8 || !bytes.Equal(b[:4], checkpointMagic[:]) {
		return h, nil, errors.New("not a checkpoint")
	}
	if b[4] < 1 || b[4] > CheckpointVersion {
		return h, nil, fmt.Errorf("checkpoint version %d: %w", b[4], ErrCheckpointMismatch)
	}
	h.Version = b[4]
	h.Key = binary.LittleEndian.Uint64(b[5:])
	b = b[13:]
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return h, nil, errors.New("checkpoint header cut short")
	}
	b = b[k:]
	first, k := binary.Varint(b)
	if k <= 0 {
		return h, nil, errors.New("checkpoint header cut short")
	}
	b = b[k:]
	last, k := binary.Varint(b)
	if k <= 0 || n == 0 || n > 1<<30 {
		return h, nil, errors.New("checkpoint header cut short")
	}
	h.Points, h.First, h.Last = int(n), time.Unix(0, first), time.Unix(0, last)
	return h, b[k:], nil
}

// Restore appends the points of pieces (Pending's, oldest first) to the
// history as they were computed, without recomputing them: only the newest
// pieces the history keeps are decoded, and only their points from from on
// (zero: any), as many as the history keeps, newer than the history's
// newest. Points appended afterwards (the inputs since the last piece, and
// a warm-up before them) are stored only from after the last restored
// point on. Pieces whose key is not key(their version) are refused with
// ErrCheckpointMismatch. mu is the lock the history's owner holds for
// every other call: it is held while each piece's points are appended,
// not while the pieces are decoded. It returns the points restored and the
// time of the last; on an error the pieces before the damaged one stay
// restored.
func (h *History) Restore(mu sync.Locker, pieces [][]byte, from time.Time, key func(version byte) uint64) (n int, last time.Time, err error) {
	keep := len(h.slots) // set by New, never changed
	heads := make([]CheckpointHeader, len(pieces))
	for i, b := range pieces {
		if heads[i], _, err = ParseCheckpointHeader(b); err != nil {
			return 0, last, err
		}
	}
	start, total := len(pieces), 0
	for start > 0 && total < keep {
		start--
		total += heads[start].Points
	}
	for _, hd := range heads[start:] {
		if hd.Key != key(hd.Version) {
			return 0, last, ErrCheckpointMismatch
		}
	}
	// The points of the first piece beyond what the history keeps.
	skip := total - keep
	for i, b := range pieces[start:] {
		if heads[start+i].Last.Before(from) {
			skip -= heads[start+i].Points
			continue
		}
		pts, err := decodePiece(b)
		if err != nil {
			return n, last, err
		}
		mu.Lock()
		for _, p := range pts {
			if skip--; skip >= 0 || p.Time.Before(from) || h.count > 0 && !p.Time.After(h.at(h.count-1).Time) {
				continue
			}
			h.Append(p)
			n++
			last = p.Time
		}
		// Restored points are the checkpoint's already; what follows is
		// handed out again.
		h.ckptNext = h.seq + 1
		if n > 0 {
			h.restoredTo = last
		}
		mu.Unlock()
	}
	return n, last, nil
}

// decodePiece returns a piece's points with their detail. A piece that
// passed its recording's checksum but does not decode is an error, never
// a panic.
func decodePiece(b []byte) (pts []point.Point, err error) {
	defer func() {
		if r := recover(); r != nil {
			pts, err = nil, fmt.Errorf("checkpoint damaged: %v", r)
		}
	}()
	hd, body, err := ParseCheckpointHeader(b)
	if err != nil {
		return nil, err
	}
	var pc ckptPiece
	if err := gob.NewDecoder(bytes.NewReader(body)).Decode(&pc); err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	if len(pc.Points) != hd.Points || len(pc.Seg) != hd.Points || len(pc.Idx) != hd.Points {
		return nil, errors.New("checkpoint damaged: its point counts disagree")
	}
	var c columns
	for _, e := range pc.Names {
		c.instances.vals = grow(c.instances.vals, e.Code)
		c.instances.vals[e.Code] = instanceKey{e.Target, e.Role, e.Engine, e.Pool}
	}
	for _, e := range pc.Reasons {
		c.reasons.vals = grow(c.reasons.vals, e.Code)
		c.reasons.vals[e.Code] = e.Text
	}
	for _, z := range pc.Zones {
		loc, err := time.LoadLocation(z.Name)
		if err != nil {
			loc = time.FixedZone(z.Name, z.Offset)
		}
		c.zones = append(c.zones, loc)
	}
	segs := make([]*segment, len(pc.Segs))
	for i, s := range pc.Segs {
		if len(s.RowOff) == 0 || len(s.IDsOff) != len(s.RowOff) || int(s.RowOff[len(s.RowOff)-1]) != len(s.Data) {
			return nil, errors.New("checkpoint damaged: a segment's rows disagree with its bytes")
		}
		for _, id := range s.IDs {
			if int(id) >= len(c.instances.vals) || c.instances.vals[id] == (instanceKey{}) {
				return nil, errors.New("checkpoint damaged: a segment names an instance its table lacks")
			}
		}
		segs[i] = &segment{n: s.N, data: s.Data, rowOff: s.RowOff, ids: s.IDs, idsOff: s.IDsOff, reasons: s.Reasons}
	}
	if hd.Version == 1 {
		// What version 2 added: the stages' work, load shed and waiting by
		// reason, and the whole request's TTFT with what it leaves untimed.
		for i := range pc.Points {
			withoutWork(&pc.Points[i])
			withoutShed(&pc.Points[i])
			for k := range pc.Points[i].Pools {
				pc.Points[i].Pools[k].Phases.FromOlder()
			}
		}
	}
	if hd.Version <= 2 {
		// What version 3 added: decode's step time.
		for i := range pc.Points {
			withoutStep(&pc.Points[i])
		}
	}
	if hd.Version <= 3 {
		// What version 4 added: the routers' phases and migrations.
		for i := range pc.Points {
			withoutRouterParts(&pc.Points[i])
		}
	}
	var rd *segReader
	for i := range pc.Points {
		if k := pc.Seg[i]; k >= 0 {
			seg := segs[k]
			if rd == nil || rd.seg != seg {
				rd = c.newSegReader(seg, "")
			}
			pc.Points[i].Instances = rd.point(&c, int(pc.Idx[i]), "")
		}
	}
	return pc.Points, nil
}

func grow[T any](s []T, code uint32) []T {
	if int(code) < len(s) {
		return s
	}
	return append(s, make([]T, int(code)+1-len(s))...)
}

// withoutRouterParts marks the routers' phases of the pools' TTFT and
// their migrations, which a piece before version 4 did not keep, as
// absent.
func withoutRouterParts(p *point.Point) {
	n := point.Absent(whyEarlierPiece)
	for i := range p.Pools {
		ph, f := &p.Pools[i].Phases, &p.Pools[i].Failures
		ph.Router, ph.Handover, ph.PrefillLeg = n, n, n
		f.Migrated = point.FailureRate{PerSecond: n, Ratio: n}
	}
}

// withoutStep marks decode's step time, which a version-2 piece did not
// keep, as absent.
func withoutStep(p *point.Point) {
	step := func(s *point.StagePoint) {
		if s.Batch != nil {
			s.Batch.Step = point.Absent(whyEarlierPiece)
		}
	}
	step(&p.Decode)
	for i := range p.Pools {
		step(&p.Pools[i].Decode)
	}
}

// withoutWork marks what a version-1 piece did not keep as absent.
func withoutWork(p *point.Point) {
	stage := func(s *point.StagePoint) {
		s.Busy = point.Absent(whyEarlierPiece)
	}
	kv := func(k *point.KVPoint) {
		k.LinkBusy, k.LinkBytes = point.Absent(whyEarlierPiece), point.Absent(whyEarlierPiece)
	}
	batch := func(s *point.StagePoint) {
		none := point.Absent(whyEarlierPiece)
		s.Batch = &point.Batch{Running: none, Limit: none, Step: none}
	}
	stage(&p.Prefill)
	stage(&p.Decode)
	batch(&p.Decode)
	kv(&p.KV)
	for i := range p.Pools {
		stage(&p.Pools[i].Prefill)
		stage(&p.Pools[i].Decode)
		batch(&p.Pools[i].Decode)
		kv(&p.Pools[i].KV)
	}
}
