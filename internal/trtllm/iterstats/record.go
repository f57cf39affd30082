package iterstats

import (
	"math"
	"strconv"
	"time"

	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

// The types below hold TensorRT-LLM's IterationStats fields tolerantly: a
// missing key, null, or a value of the wrong type leaves the field unknown
// (ok == false) instead of failing the record or reading as 0. Each is set
// from one raw JSON value (see decode.go).

// num is an optional JSON number.
type num struct {
	v  float64
	ok bool
}

func (n *num) set(k kind, raw []byte) {
	*n = num{}
	if k != kindNumber {
		return
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	*n = num{v, true}
}

// integer is an optional JSON integer, read exactly (never through float64
// when it is written as an integer literal).
type integer struct {
	v  int64
	ok bool
}

func (n *integer) set(k kind, raw []byte) {
	*n = integer{}
	if k != kindNumber {
		return
	}
	if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		*n = integer{v, true}
		return
	}
	// An integral float literal below 2^53 is accepted (some writers emit 3.0).
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return
	}
	*n = integer{int64(f), true}
}

// reqID is a request id as a number: a 64-bit integer read exactly (ids
// above 2^53 are common), by the same parser as the request ledger's.
type reqID struct {
	v  uint64
	ok bool
}

// setRaw reads the id from its raw JSON value (an integer literal or a
// string holding one).
func (n *reqID) setRaw(raw []byte) {
	*n = reqID{}
	if id, err := reqtrace.ParseID(raw); err == nil {
		n.v, n.ok = id.Uint64()
	}
}

// str is an optional JSON string among a few known values (so that reading
// it does not allocate); other values are kept unknown.
type str struct {
	v  string
	ok bool
}

var knownStrings = []string{
	"overlap", "non_overlap",
	"QUEUED", "ENCODER_IN_PROGRESS", "CONTEXT_IN_PROGRESS", "GENERATION_IN_PROGRESS", "GENERATION_COMPLETE",
}

func (s *str) set(k kind, raw []byte) {
	*s = str{}
	if k != kindString {
		return
	}
	for _, known := range knownStrings {
		if string(raw) == known {
			*s = str{known, true}
			return
		}
	}
}

// hostTime is the record's "timestamp": local wall time of the engine host,
// "%m-%d-%Y %H:%M:%S.%f", no zone. It is read as if it were UTC; the clock
// offset estimate absorbs the zone.
type hostTime struct {
	t  time.Time
	ok bool
}

func (h *hostTime) set(k kind, raw []byte) {
	*h = hostTime{}
	if k == kindString {
		h.t, h.ok = parseHostTime(raw)
	}
}

// parseHostTime reads "MM-DD-YYYY HH:MM:SS[.fraction]" without allocating.
func parseHostTime(b []byte) (time.Time, bool) {
	if len(b) < 19 || b[2] != '-' || b[5] != '-' || b[10] != ' ' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	d := func(i, n int) (int, bool) {
		v := 0
		for _, c := range b[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	mo, ok1 := d(0, 2)
	dd, ok2 := d(3, 2)
	yy, ok3 := d(6, 4)
	hh, ok4 := d(11, 2)
	mi, ok5 := d(14, 2)
	ss, ok6 := d(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || dd < 1 || dd > 31 || hh > 23 || mi > 59 || ss > 60 {
		return time.Time{}, false
	}
	ns := 0
	if rest := b[19:]; len(rest) > 0 {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return time.Time{}, false
		}
		f, ok := d(20, len(rest)-1)
		if !ok {
			return time.Time{}, false
		}
		for i := len(rest) - 1; i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	t := time.Date(yy, time.Month(mo), dd, hh, mi, ss, ns, time.UTC)
	if t.Day() != dd { // 02-31 and the like
		return time.Time{}, false
	}
	return t, true
}

// kvStats is kvCacheStats: four gauges and four counters cumulative since
// the rank's KV manager was created.
type kvStats struct {
	MaxNumBlocks     num
	UsedNumBlocks    num
	AllocTotalBlocks num
	AllocNewBlocks   num
	ReusedBlocks     num
	MissedBlocks     num
}

// reqStat is one element of requestStats (rank-0 rows only), with its
// disServingStats.
type reqStat struct {
	ID         reqID
	Stage      str
	HasDis     bool
	TransferMS num
	Size       integer
}

// record is one IterationStats row.
type record struct {
	Timestamp      hostTime
	Iter           integer
	Seq            integer
	DroppedFrames  integer
	Rank           integer
	ADPRank        integer
	IterLatencyMS  num
	HostStepTimeMS num
	NumNewActive   num
	NumActive      num
	NumQueued      num
	NumCompleted   num
	SchedulerMode  str
	KV             kvStats
	HasKV          bool
	// reqLo:reqHi index the Reader's request arena.
	reqLo, reqHi int32
	known        bool // some field the reader uses was present

	arrival int // position in the body, breaks ties
}

// rankOf is the row's attention-DP rank: attentionDpRank, then rank, then 0
// (upstream's own collector resolves it the same way).
func (r *record) rankOf() int64 {
	if r.ADPRank.ok {
		return r.ADPRank.v
	}
	if r.Rank.ok {
		return r.Rank.v
	}
	return 0
}

// key orders records by iter, then statsSequence, then rank, then arrival;
// a missing iter or sequence sorts first (oldest).
func (r *record) less(o *record) bool {
	a, b := orMin(r.Iter), orMin(o.Iter)
	if a != b {
		return a < b
	}
	a, b = orMin(r.Seq), orMin(o.Seq)
	if a != b {
		return a < b
	}
	if ra, rb := r.rankOf(), o.rankOf(); ra != rb {
		return ra < rb
	}
	return r.arrival < o.arrival
}

// sameFrame tells whether two rows are rank rows of one stats frame.
// Rows with neither iter nor statsSequence are frames of their own.
func (r *record) sameFrame(o *record) bool {
	if !r.Iter.ok && !r.Seq.ok {
		return false
	}
	return orMin(r.Iter) == orMin(o.Iter) && orMin(r.Seq) == orMin(o.Seq)
}

func orMin(i integer) int64 {
	if i.ok {
		return i.v
	}
	return math.MinInt64
}
