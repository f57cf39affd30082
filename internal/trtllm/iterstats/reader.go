// Package iterstats reads the JSON iteration statistics that a TensorRT-LLM
// worker serves at GET /metrics when enable_iter_perf_stats is on: an array
// of IterationStats records, one per stats frame and attention-DP rank,
// taken from a queue that is drained on every read.
//
// The Reader turns each poll into the same engine.Observation the Prometheus
// adapters produce, with counters kept cumulative across polls (completed
// requests, KV bytes and transfers of disaggregated serving), gauges of the
// newest iteration, and the sample time carried by the records themselves.
// Because reads drain the endpoint, ptdmon must be its only consumer; the
// Reader notices frames that another client took (gaps in statsSequence
// that the engine's own statsDroppedFrames does not explain).
package iterstats

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/trtllm/reqtrace"
)

// ErrEmpty is returned for an empty poll ([]) when no record was ever seen:
// the engine runs without iteration statistics, or has not iterated yet.
// Its scrape-failure reason is iterstats_empty.
var ErrEmpty error = &reasonError{"iterstats_empty", "iteration stats are empty (is enable_iter_perf_stats set on the engine?)"}

// reasonError names its scrape-failure reason (engine.ReasonError).
type reasonError struct{ reason, msg string }

func (e *reasonError) Error() string  { return e.msg }
func (e *reasonError) Reason() string { return e.reason }

// ErrNotArray is wrapped by the error for a body that is not a JSON array.
var ErrNotArray = errors.New("iteration stats body is not a JSON array")

// Defaults for Options.
const (
	DefaultMaxBuffered        = 4096
	DefaultMaxTrackedRequests = 65536
	DefaultClockWindow        = 60
	DefaultClockStep          = time.Second
)

// Options configure a Reader. Zero values take the defaults.
type Options struct {
	// Name identifies the target in log messages.
	Name string
	// MaxBuffered bounds the records kept from one poll; the oldest beyond
	// it are dropped and counted in Stats.DroppedBuffer.
	MaxBuffered int
	// MaxTrackedRequests bounds the request ids remembered to count each
	// disaggregated KV transfer once (the oldest are forgotten first).
	MaxTrackedRequests int
	// ClockWindow and ClockStep detect the engine host's clock stepping
	// back: when the least (poll time − record time) over the last
	// ClockWindow polls exceeds the kept least by more than ClockStep, the
	// offset estimate is rebased.
	ClockWindow int
	ClockStep   time.Duration
	Logger      *slog.Logger
}

// Stats are the Reader's own counts since it was created.
type Stats struct {
	Polls      uint64 // calls to Read
	EmptyPolls uint64 // polls that returned [] (or only unusable elements)
	Records    uint64 // records decoded
	// Dropped = DroppedBuffer + DroppedEngine.
	Dropped       uint64
	DroppedBuffer uint64 // records beyond MaxBuffered in one poll
	DroppedEngine uint64 // frames the engine reports dropping (statsDroppedFrames deltas)
	// Missing counts frames that neither arrived nor were reported dropped:
	// another client is draining the endpoint.
	Missing uint64
	// Decreases counts baseline resets of cumulative fields
	// (kvCacheStats, statsDroppedFrames) that went down.
	Decreases      uint64
	ParseFailures  uint64 // bodies that were not (complete) JSON arrays
	SkippedRecords uint64 // array elements that were not objects
	DuplicateRows  uint64 // rows repeating a rank of the same frame (ignored)
	TimeFallbacks  uint64 // polls whose newest record had no timestamp
	TimeClamped    uint64 // polls whose sample time was moved after the previous one
	ClockRebases   uint64 // offset estimate rebased after a host clock step

	// ClockOffset is the estimated (ptdmon clock − engine host clock), valid
	// when HasClockOffset; it includes the host's time zone.
	ClockOffset    time.Duration
	HasClockOffset bool

	// NewActive is the running sum of rank-0 numNewActiveRequests.
	NewActive    float64
	HasNewActive bool
	// KVBlocks are the summed per-rank deltas of the cumulative
	// kvCacheStats counters since the Reader started.
	KVBlocks KVBlocks
}

// KVBlocks are reuse counters of the engine's KV block manager (host/GPU
// prefix reuse, not P/D transfer), summed over ranks.
type KVBlocks struct {
	Reused, Missed, AllocTotal, AllocNew float64
	OK                                   bool // some kvCacheStats counter was seen
}

// IterationLatency summarises iterLatencyMS over the frames of one poll.
// In overlap mode (and with pipeline parallelism) a record's iterLatencyMS
// runs from the start of the loop that built the batch to the loop that
// consumed it: about two loop iterations, not one.
type IterationLatency struct {
	N              int           // frames with iterLatencyMS; 0 = unknown
	Mean, P50, P99 time.Duration // over those frames
	Max            time.Duration
	Mode           string // schedulerMode: "overlap", "non_overlap", "" if not reported
	Overlap        bool
	// HostStep is the mean hostStepTimeMS (one loop's CPU wall time), when
	// the engine reports it.
	HostStep    time.Duration
	HasHostStep bool
	At          time.Time // sample time of the poll
}

// Loop estimates one loop iteration's duration and says from what:
// hostStepTimeMS when reported, else iterLatencyMS (non-overlap) or half of
// it (overlap, where it spans about two loops).
func (l IterationLatency) Loop() (time.Duration, string, bool) {
	switch {
	case l.HasHostStep:
		return l.HostStep, "hostStepTimeMS", true
	case l.N == 0:
		return 0, "", false
	case l.Overlap:
		return l.Mean / 2, "iterLatencyMS/2 (overlap)", true
	}
	return l.Mean, "iterLatencyMS", true
}

const (
	blkReused = iota
	blkMissed
	blkAllocTotal
	blkAllocNew
	numBlk
)

var blkNames = [numBlk]string{"reusedBlocks", "missedBlocks", "allocTotalBlocks", "allocNewBlocks"}

type rankState struct {
	base     [numBlk]float64
	has      [numBlk]bool
	lastWarn time.Time
	warned   bool
}

// Reader is kept per target; not safe for concurrent use.
type Reader struct {
	role engine.Role
	opts Options
	log  *slog.Logger

	buf   []record
	heap  oldest
	idx   []int
	seqs  []int64
	arena []reqStat // requestStats of the poll's records
	lats  []float64

	obs engine.Observation

	completed    float64
	hasCompleted bool
	// busy is the seconds the engine ran iterations (busyTime), over
	// every frame read; hasBusy once one frame carried a time.
	busy        float64
	hasBusy     bool
	lastIter    int64 // the iter of the newest frame counted in busy
	hasIter     bool
	kvBytes     float64
	kvTransfers float64
	hasKV       bool
	kvSeen      map[uint64]struct{}
	kvRing      []uint64
	kvHead      int

	ranks map[int64]*rankState

	dropBase    int64
	hasDropBase bool
	dropWarn    time.Time
	dropWarned  bool
	lastSeq     int64
	hasLastSeq  bool
	missWarn    time.Time
	missWarned  bool

	minDiff  time.Duration
	hasMin   bool
	window   []time.Duration
	winHead  int
	winN     int
	lastOut  time.Time
	now      time.Time // the current poll's time
	hasOut   bool
	everSeen bool
	mode     string

	last  IterationLatency
	stats Stats
}

// NewReader returns a Reader for one target of the given role.
func NewReader(role engine.Role, opts Options) *Reader {
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = DefaultMaxBuffered
	}
	if opts.MaxTrackedRequests <= 0 {
		opts.MaxTrackedRequests = DefaultMaxTrackedRequests
	}
	if opts.ClockWindow <= 0 {
		opts.ClockWindow = DefaultClockWindow
	}
	if opts.ClockStep <= 0 {
		opts.ClockStep = DefaultClockStep
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.Name != "" {
		log = log.With("target", opts.Name)
	}
	return &Reader{
		role:   role,
		opts:   opts,
		log:    log,
		kvSeen: make(map[uint64]struct{}),
		ranks:  make(map[int64]*rankState),
		window: make([]time.Duration, opts.ClockWindow),
	}
}

// Stats returns the Reader's counts.
func (r *Reader) Stats() Stats { return r.stats }

// LastIteration is the iteration latency of the newest poll that carried
// records (N == 0 before any).
func (r *Reader) LastIteration() IterationLatency { return r.last }

// Read takes one poll's body (a JSON array of IterationStats records,
// possibly [] when drained) and the poll's time (midpoint of the HTTP
// exchange, with its monotonic reading). It returns the observation to
// record and the sample time to record it at. The Observation is reused by
// the next call.
//
// Counters are cumulative since the Reader started: an empty poll returns
// them unchanged at polledAt. Elements decoded before a syntax error are
// used (the endpoint drained them; they cannot be read again) and the
// damage is noted; a body with no usable element is an error.
func (r *Reader) Read(body []byte, polledAt time.Time) (*engine.Observation, time.Time, error) {
	r.stats.Polls++
	r.now = polledAt
	notes := r.obs.Notes[:0]
	dropped0 := r.stats.Dropped
	broken, err := r.decode(body)
	if err != nil {
		r.stats.ParseFailures++
		return nil, time.Time{}, err
	}
	if broken != nil {
		r.stats.ParseFailures++
		if len(r.buf) == 0 {
			return nil, time.Time{}, fmt.Errorf("iteration stats: %w", broken)
		}
		notes = append(notes, fmt.Sprintf("iteration stats body damaged after %d records (%v); later records lost", len(r.buf), broken))
	}
	if len(r.buf) == 0 {
		r.stats.EmptyPolls++
		if !r.everSeen {
			return nil, time.Time{}, ErrEmpty
		}
		at := r.monotone(polledAt, &notes)
		r.fill(notes)
		r.obs.Notes = append(r.obs.Notes, "no iteration in this poll: gauges unknown, counters unchanged")
		return &r.obs, at, nil
	}
	r.everSeen = true

	// Order by iter, then statsSequence (never by timestamp).
	r.idx = r.idx[:0]
	for i := range r.buf {
		r.idx = append(r.idx, i)
	}
	slices.SortFunc(r.idx, func(a, b int) int {
		if r.buf[a].less(&r.buf[b]) {
			return -1
		}
		if r.buf[b].less(&r.buf[a]) {
			return 1
		}
		return 0
	})

	// One row per rank and frame: a repeated (frame, rank) row would count
	// rank 0's completions twice.
	kept := r.idx[:0]
	for k, i := range r.idx {
		if k > 0 {
			p := &r.buf[r.idx[k-1]]
			if rec := &r.buf[i]; rec.sameFrame(p) && rec.rankOf() == p.rankOf() {
				r.stats.DuplicateRows++
				continue
			}
		}
		kept = append(kept, i)
	}
	r.idx = kept

	r.checkSequence(polledAt, &notes)

	r.lats = r.lats[:0]
	var hostSum float64
	hostN := 0
	var prev *record
	for _, i := range r.idx {
		rec := &r.buf[i]
		r.account(rec, polledAt)
		if prev == nil || !rec.sameFrame(prev) {
			if rec.IterLatencyMS.ok && rec.IterLatencyMS.v >= 0 {
				r.lats = append(r.lats, rec.IterLatencyMS.v)
			}
			n := r.iterations(rec)
			mode := r.mode
			if rec.SchedulerMode.ok {
				mode = rec.SchedulerMode.v // the record's own, before r.mode takes it below
			}
			if s, ok := busyTime(rec, mode); ok {
				r.busy += s * float64(n)
				r.hasBusy = true
			}
			if rec.HostStepTimeMS.ok && rec.HostStepTimeMS.v >= 0 {
				hostSum += rec.HostStepTimeMS.v
				hostN++
			}
		}
		if rec.SchedulerMode.ok {
			r.mode = rec.SchedulerMode.v
		}
		prev = rec
	}

	// The newest frame: all rank rows sharing the last row's iter/sequence.
	newest := len(r.idx) - 1
	for newest > 0 && r.buf[r.idx[newest-1]].sameFrame(&r.buf[r.idx[len(r.idx)-1]]) {
		newest--
	}
	frame := r.idx[newest:]

	at, ok := r.sampleTime(frame, polledAt)
	if !ok {
		r.stats.TimeFallbacks++
		notes = append(notes, "records carry no timestamp: sampled at poll time")
	}
	at = r.monotone(at, &notes)

	if d := r.stats.Dropped - dropped0; d > 0 {
		notes = append(notes, fmt.Sprintf("%d iteration records dropped in this poll: completions and KV transfers in them are not counted", d))
	}
	r.fill(notes)
	r.gauges(frame)
	r.latency(hostSum, hostN, at)
	if r.last.Overlap {
		r.obs.Notes = append(r.obs.Notes, "schedulerMode=overlap: iterLatencyMS spans about two loop iterations, not one")
	}
	return &r.obs, at, nil
}

// decode reads the array into r.buf, keeping at most MaxBuffered records
// (the newest by iter/statsSequence). err is fatal; broken reports damage
// after the array started.
func (r *Reader) decode(body []byte) (broken, err error) {
	r.buf = r.buf[:0]
	r.heap = oldest{buf: &r.buf, idx: r.heap.idx[:0]}
	r.seqs = r.seqs[:0]
	r.arena = r.arena[:0]
	switch c := firstByte(body); c {
	case '[':
	case 0:
		return nil, fmt.Errorf("%w: empty body", ErrNotArray)
	default:
		return nil, fmt.Errorf("%w: it starts with %s", ErrNotArray, describe(c))
	}
	n, dropped := 0, 0
	var scratch record
	err = records(body, func(raw *rawRecord) {
		toRecord(raw, &scratch, &r.arena)
		if !scratch.known { // {} or nothing the reader knows
			r.stats.SkippedRecords++
			return
		}
		r.stats.Records++
		scratch.arrival = n
		n++
		if scratch.Seq.ok {
			r.seqs = append(r.seqs, scratch.Seq.v)
		}
		if !r.keep(&scratch) {
			dropped++
		}
	}, func() { r.stats.SkippedRecords++ })
	if err != nil {
		broken = err
	}
	if dropped > 0 {
		r.stats.DroppedBuffer += uint64(dropped)
		r.stats.Dropped += uint64(dropped)
		r.warnDrop(fmt.Sprintf("dropped %d oldest iteration records beyond the buffer of %d", dropped, r.opts.MaxBuffered))
	}
	return broken, nil
}

// firstByte is the first byte of body past white space, 0 if none.
func firstByte(body []byte) byte {
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 {
		return b[0]
	}
	return 0
}

func describe(c byte) string {
	switch {
	case c == '{':
		return "'{' (an object)"
	case c == '"':
		return "a string"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || isDigit(c):
		return "a number"
	case c == '#':
		return "'#' (a comment line? strip it)"
	}
	return fmt.Sprintf("%q", c)
}

// keep puts rec into the bounded buffer; false means one record (rec or the
// oldest kept) was dropped.
func (r *Reader) keep(rec *record) bool {
	if len(r.buf) < r.opts.MaxBuffered {
		r.buf = append(r.buf, *rec)
		// Append and sift up without heap.Push, which would box the index.
		r.heap.idx = append(r.heap.idx, len(r.buf)-1)
		heap.Fix(&r.heap, len(r.heap.idx)-1)
		return true
	}
	top := r.heap.idx[0]
	if !r.buf[top].less(rec) {
		return false // rec is the oldest
	}
	r.buf[top] = *rec
	heap.Fix(&r.heap, 0)
	return false
}

// oldest is a container/heap of indices into the buffer, the oldest
// record (by iter, then statsSequence) on top.
type oldest struct {
	buf *[]record
	idx []int
}

func (h *oldest) Len() int           { return len(h.idx) }
func (h *oldest) Less(i, j int) bool { return (*h.buf)[h.idx[i]].less(&(*h.buf)[h.idx[j]]) }
func (h *oldest) Swap(i, j int)      { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *oldest) Push(x any)         { h.idx = append(h.idx, x.(int)) }
func (h *oldest) Pop() any {
	n := len(h.idx) - 1
	x := h.idx[n]
	h.idx = h.idx[:n]
	return x
}

// account adds one row to the cumulative state, in iteration order.
func (r *Reader) account(rec *record, now time.Time) {
	rank := rec.rankOf()

	// statsDroppedFrames is the executor's cumulative count of frames it
	// evicted (the same value on every rank row of a frame).
	if d := rec.DroppedFrames; d.ok && d.v >= 0 {
		switch {
		case !r.hasDropBase:
			r.dropBase, r.hasDropBase = d.v, true
		case d.v > r.dropBase:
			n := uint64(d.v - r.dropBase)
			r.dropBase = d.v
			r.stats.DroppedEngine += n
			r.stats.Dropped += n
			r.warnDrop(fmt.Sprintf("engine dropped %d iteration stats frames (poll more often or raise its stats queue)", n))
		case d.v < r.dropBase:
			r.stats.Decreases++
			r.log.Warn("iteration stats: statsDroppedFrames decreased; engine restarted? baseline reset", "from", r.dropBase, "to", d.v)
			r.dropBase = d.v
		}
	}

	// kvCacheStats counters are cumulative per rank: delta against the
	// rank's baseline; a decrease warns and resets the baseline.
	if rec.HasKV {
		kv := &rec.KV
		rs := r.ranks[rank]
		if rs == nil {
			rs = &rankState{}
			r.ranks[rank] = rs
		}
		vals := [numBlk]num{kv.ReusedBlocks, kv.MissedBlocks, kv.AllocTotalBlocks, kv.AllocNewBlocks}
		sums := [numBlk]*float64{&r.stats.KVBlocks.Reused, &r.stats.KVBlocks.Missed, &r.stats.KVBlocks.AllocTotal, &r.stats.KVBlocks.AllocNew}
		for i, v := range vals {
			if !v.ok || v.v < 0 {
				continue
			}
			r.stats.KVBlocks.OK = true
			switch {
			case !rs.has[i]:
				rs.base[i], rs.has[i] = v.v, true
			case v.v >= rs.base[i]:
				*sums[i] += v.v - rs.base[i]
				rs.base[i] = v.v
			default:
				r.stats.Decreases++
				if !rs.warned || now.Sub(rs.lastWarn) >= time.Minute {
					rs.warned, rs.lastWarn = true, now
					r.log.Warn("iteration stats: cumulative KV counter decreased; baseline reset",
						"rank", rank, "field", blkNames[i], "from", rs.base[i], "to", v.v)
				}
				rs.base[i] = v.v
			}
		}
	}

	if rank != 0 {
		return // queue, completion and request fields are rank 0's
	}
	if c := rec.NumCompleted; c.ok && c.v >= 0 {
		r.completed += c.v
		r.hasCompleted = true
	}
	if c := rec.NumNewActive; c.ok && c.v >= 0 {
		r.stats.NewActive += c.v
		r.stats.HasNewActive = true
	}
	for i := rec.reqLo; i < rec.reqHi; i++ {
		q := &r.arena[i]
		if !q.ID.ok || !q.HasDis {
			continue
		}
		done := (q.TransferMS.ok && q.TransferMS.v > 0) ||
			(q.Stage.ok && (q.Stage.v == "GENERATION_IN_PROGRESS" || q.Stage.v == "GENERATION_COMPLETE"))
		if !done || !q.Size.ok || q.Size.v <= 0 {
			continue
		}
		if _, seen := r.kvSeen[q.ID.v]; seen {
			continue
		}
		r.remember(q.ID.v)
		r.kvBytes += float64(q.Size.v)
		r.kvTransfers++
		r.hasKV = true
	}
}

// remember adds a request id to the bounded set of counted transfers.
func (r *Reader) remember(id uint64) {
	if len(r.kvRing) < r.opts.MaxTrackedRequests {
		r.kvRing = append(r.kvRing, id)
	} else {
		delete(r.kvSeen, r.kvRing[r.kvHead])
		r.kvRing[r.kvHead] = id
		r.kvHead = (r.kvHead + 1) % len(r.kvRing)
	}
	r.kvSeen[id] = struct{}{}
}

// checkSequence compares the frames that arrived with statsSequence: frames
// that neither arrived nor were reported dropped by the engine were read by
// someone else.
func (r *Reader) checkSequence(now time.Time, notes *[]string) {
	if len(r.seqs) == 0 {
		return
	}
	slices.Sort(r.seqs)
	maxSeq := r.seqs[len(r.seqs)-1]
	if !r.hasLastSeq || maxSeq < r.lastSeq {
		// First poll, or the engine restarted its sequence.
		r.lastSeq, r.hasLastSeq = maxSeq, true
		return
	}
	// Engine-reported drops that fall into this poll's range.
	var engineDrops int64
	hi := int64(-1)
	for i := range r.buf {
		if d := r.buf[i].DroppedFrames; d.ok {
			hi = max(hi, d.v)
		}
	}
	if hi >= 0 && r.hasDropBase {
		// dropBase is the previous poll's newest value until account runs;
		// checkSequence runs first.
		engineDrops = max(hi-r.dropBase, 0)
	}
	distinct := int64(0)
	for i, s := range r.seqs {
		if s > r.lastSeq && (i == 0 || s != r.seqs[i-1]) {
			distinct++
		}
	}
	missing := (maxSeq - r.lastSeq) - distinct - engineDrops
	r.lastSeq = maxSeq
	if missing <= 0 {
		return
	}
	r.stats.Missing += uint64(missing)
	*notes = append(*notes, fmt.Sprintf("%d iteration stats frames missing: another client is reading this endpoint (reads drain it; ptdmon must be its only consumer)", missing))
	if !r.missWarned || now.Sub(r.missWarn) >= time.Minute {
		r.missWarned, r.missWarn = true, now
		r.log.Warn("iteration stats frames missing: another client drains the endpoint; ptdmon must be its only consumer", "frames", missing)
	}
}

func (r *Reader) warnDrop(msg string) {
	now := r.now
	if !r.dropWarned || now.Sub(r.dropWarn) >= time.Minute {
		r.dropWarned, r.dropWarn = true, now
		r.log.Warn("iteration stats: "+msg, "dropped_total", r.stats.Dropped)
	}
}

// sampleTime is the newest frame's own timestamp mapped to ptdmon's clock.
// The offset (poll time − host time) of each poll is the true offset plus
// the record's age when polled; the least one seen bounds the offset best
// (NTP's least-delay rule). The result keeps polledAt's monotonic reading.
func (r *Reader) sampleTime(frame []int, polledAt time.Time) (time.Time, bool) {
	var ts time.Time
	found := false
	for _, i := range frame {
		if t := r.buf[i].Timestamp; t.ok {
			ts, found = t.t, true
			break
		}
	}
	if !found {
		return polledAt, false
	}
	diff := polledAt.Sub(ts) // saturates
	if !r.hasMin || diff < r.minDiff {
		r.minDiff, r.hasMin = diff, true
	}
	r.window[r.winHead] = diff
	r.winHead = (r.winHead + 1) % len(r.window)
	if r.winN < len(r.window) {
		r.winN++
	}
	if r.winN == len(r.window) {
		wmin := slices.Min(r.window)
		if satSub(wmin, r.minDiff) > r.opts.ClockStep {
			r.log.Warn("iteration stats: engine host clock stepped back; offset estimate rebased",
				"from", r.minDiff, "to", wmin)
			r.minDiff = wmin
			r.stats.ClockRebases++
		}
	}
	r.stats.ClockOffset, r.stats.HasClockOffset = r.minDiff, true
	return polledAt.Add(-satSub(diff, r.minDiff)), true
}

// satSub is a − b without overflow.
func satSub(a, b time.Duration) time.Duration {
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// monotone keeps sample times increasing: records built before the
// previous sample but delivered late are stamped just after it.
func (r *Reader) monotone(at time.Time, notes *[]string) time.Time {
	if r.hasOut && !at.After(r.lastOut) {
		at = r.lastOut.Add(time.Microsecond)
		r.stats.TimeClamped++
		*notes = append(*notes, "records older than the previous sample: sample time moved just after it")
	}
	r.lastOut, r.hasOut = at, true
	return at
}

// fill writes the cumulative counters into a fresh observation.
func (r *Reader) fill(notes []string) {
	o := &r.obs
	o.Engine, o.Role, o.Model = engine.TensorRTLLM, r.role, ""
	o.Counters = o.Counters[:0]
	o.Gauges = [engine.NumGauges]float64{}
	o.HasGauges = [engine.NumGauges]bool{}
	for i := range o.Histograms {
		o.Histograms[i] = engine.Histogram{Buckets: o.Histograms[i].Buckets[:0]}
	}
	o.Ignored = o.Ignored[:0]
	o.Notes = notes
	if r.hasCompleted {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.Completed, Value: r.completed})
	}
	if r.hasBusy {
		o.Counters = append(o.Counters, engine.CounterValue{Metric: engine.BusySeconds, Value: r.busy})
	}
	if r.hasKV {
		o.Counters = append(o.Counters,
			engine.CounterValue{Metric: engine.KVBytes, Value: r.kvBytes},
			engine.CounterValue{Metric: engine.KVTransfers, Value: r.kvTransfers})
	}
}

// gauges sets Running, Waiting and KVUsage from the newest frame.
func (r *Reader) gauges(frame []int) {
	var running, used, maxb float64
	hasRunning, hasKV := false, false
	for _, i := range frame {
		rec := &r.buf[i]
		if rec.NumActive.ok && rec.NumActive.v >= 0 {
			running += rec.NumActive.v
			hasRunning = true
		}
		if kv := &rec.KV; rec.HasKV && kv.UsedNumBlocks.ok && kv.MaxNumBlocks.ok && kv.MaxNumBlocks.v > 0 && kv.UsedNumBlocks.v >= 0 {
			used += kv.UsedNumBlocks.v
			maxb += kv.MaxNumBlocks.v
			hasKV = true
		}
		if rec.rankOf() == 0 && rec.NumQueued.ok && rec.NumQueued.v >= 0 {
			r.setGauge(engine.Waiting, rec.NumQueued.v)
		}
	}
	if hasRunning {
		r.setGauge(engine.Running, running)
	}
	if hasKV {
		r.setGauge(engine.KVUsage, used/maxb)
	}
}

func (r *Reader) setGauge(m engine.Metric, v float64) {
	r.obs.Gauges[m.GaugeIndex()] = v
	r.obs.HasGauges[m.GaugeIndex()] = true
}

// latency summarises the poll's iterLatencyMS values (one per frame).
func (r *Reader) latency(hostSum float64, hostN int, at time.Time) {
	l := IterationLatency{Mode: r.mode, Overlap: r.mode == "overlap", At: at}
	if hostN > 0 {
		l.HostStep, l.HasHostStep = ms(hostSum/float64(hostN)), true
	}
	if n := len(r.lats); n > 0 {
		slices.Sort(r.lats)
		var sum float64
		for _, v := range r.lats {
			sum += v
		}
		l.N = n
		l.Mean = ms(sum / float64(n))
		l.P50 = ms(reqtrace.NearestRank(r.lats, 50))
		l.P99 = ms(reqtrace.NearestRank(r.lats, 99))
		l.Max = ms(r.lats[n-1])
	}
	r.last = l
}

func ms(v float64) time.Duration {
	d := v * float64(time.Millisecond)
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(d)
}

// busyTime is the seconds one frame's iteration kept the engine busy: its
// host step time where reported, else its iterLatencyMS, of which an
// overlapped iteration is about half its own (IterationLatency.Loop). The
// executor writes records of the iterations it ran, so each is work (its
// active requests may already be counted out when it is written).
func busyTime(rec *record, mode string) (float64, bool) {
	switch {
	case rec.HostStepTimeMS.ok && rec.HostStepTimeMS.v >= 0:
		return rec.HostStepTimeMS.v / 1e3, true
	case rec.IterLatencyMS.ok && rec.IterLatencyMS.v >= 0 && mode == "overlap":
		return rec.IterLatencyMS.v / 2e3, true
	case rec.IterLatencyMS.ok && rec.IterLatencyMS.v >= 0:
		return rec.IterLatencyMS.v / 1e3, true
	}
	return 0, false
}

// iterations is how many iterations a frame stands for: those since the
// previous frame, where the engine writes a record every few iterations
// (iter_stats_interval), one where iter does not say.
func (r *Reader) iterations(rec *record) int64 {
	if !rec.Iter.ok {
		return 1
	}
	it := rec.Iter.v
	n := int64(1)
	if r.hasIter && it > r.lastIter && it-r.lastIter <= maxIterGap {
		n = it - r.lastIter
	}
	r.lastIter, r.hasIter = it, true
	return n
}

// maxIterGap bounds the iterations one frame stands for: a larger jump is a
// restart or a gap in the records, not a sampling interval.
const maxIterGap = 1000
