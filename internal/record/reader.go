//go:build !norecord

package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/ledger"
	"github.com/ptdmon/ptdmon/internal/scrape"
)

// Run is a recording opened for reading.
type Run struct {
	dir   string
	meta  Meta
	db    *store
	src   spans
	texts *errorTexts
	lost  []Loss
}

// Open opens the recording in dir for reading; a run still being written
// can be opened too (its newest samples are read from the WAL). A block
// that cannot be read is left out and said by Lost; blocks or a WAL of
// another run are refused, naming them. Close it when done.
func Open(dir string) (*Run, error) {
	m, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	db, lost, err := openStore(dir, m)
	var foreign *ForeignError
	if first := err; err != nil && !errors.As(err, &foreign) {
		// A WAL torn by a crash: let the TSDB repair it (it cuts the
		// segment at the damage, as Prometheus does at start-up), then
		// read again.
		if rerr := repair(dir); rerr != nil {
			return nil, fmt.Errorf("open recording %s: %w (repair: %w)", dir, err, rerr)
		}
		if db, lost, err = openStore(dir, m); err != nil {
			return nil, fmt.Errorf("open recording %s: %w", dir, err)
		}
		lost = append(lost, Loss{File: "wal", Reason: fmt.Sprintf("damaged, read up to the damage (%v)", first), Repaired: true})
	}
	if err != nil {
		return nil, err
	}
	texts, err := readErrorTexts(dir, m.ErrorTextsCut)
	if err != nil {
		_ = db.close()
		return nil, err
	}
	return &Run{dir: dir, meta: m, db: db, src: spans{db.q}, texts: texts, lost: lost}, nil
}

// lostText is losses in one line.
func lostText(ls []Loss) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.String()
	}
	return strings.Join(parts, "; ")
}

// Lost is what of the recording could not be read: blocks left out, a
// WAL cut at its damage. Empty for a whole recording.
func (r *Run) Lost() []Loss { return r.lost }

// spans serves every span of a read-only recording from its one querier,
// each Select narrowed to the span by its hints. A read-only DB loads its
// head from the WAL again for each querier, and fails to for a second
// one once the head has chunks on disk (a run killed after its first two
// minutes): one querier, opened once.
type spans struct{ all storage.Querier }

func (s spans) Querier(mint, maxt int64) (storage.Querier, error) {
	return span{s.all, mint, maxt}, nil
}

// span is one span of a recording's querier; closing it leaves the
// querier open.
type span struct {
	storage.Querier
	mint, maxt int64
}

func (s span) Select(ctx context.Context, sorted bool, h *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	if h == nil {
		h = &storage.SelectHints{Start: s.mint, End: s.maxt}
	}
	return s.Querier.Select(ctx, sorted, h, ms...)
}

func (span) Close() error { return nil }

// repair opens dir for writing, which repairs a damaged WAL, and closes it.
func repair(dir string) error {
	db, err := tsdb.Open(dir, slog.New(slog.DiscardHandler), nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return err
	}
	return db.Close()
}

// Dir is the recording's directory.
func (r *Run) Dir() string { return r.dir }

// Close releases the recording.
func (r *Run) Close() error { return r.db.close() }

// Meta is what the run was: targets with role, engine and model, B_request,
// configuration and its hash, ptdmon's version, the processes that recorded and annotations,
// interval and window.
func (r *Run) Meta() Meta { return r.meta }

// Span is the time of the first and the last recorded tick.
func (r *Run) Span() (from, to time.Time, err error) {
	q, err := r.src.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return from, to, fmt.Errorf("query recording: %w", err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, nameTick))
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			t, v := it.At()
			at := t*int64(time.Millisecond) + int64(v)
			first, last = min(first, at), max(last, at)
		}
	}
	if err := ss.Err(); err != nil {
		return from, to, fmt.Errorf("query recording: %w", err)
	}
	if first > last {
		if len(r.lost) > 0 {
			return from, to, fmt.Errorf("the recording holds no readable tick: %s", lostText(r.lost))
		}
		return from, to, errors.New("the recording holds no tick")
	}
	return time.Unix(0, first), time.Unix(0, last), nil
}

// Replay feeds the recording up to to (zero: its end) to a fresh ledger
// configured as the live one was, and returns it: its points from from on
// are the live run's. Instance detail is kept for every point.
func (r *Run) Replay(from, to time.Time) (*ledger.Ledger, error) {
	n, err := r.Ticks(to)
	if err != nil {
		return nil, err
	}
	l := ledger.New(r.LedgerConfig(n))
	if _, _, err := feed(r.src, r.meta, r.texts, l, to, time.Time{}, nil, false); err != nil {
		return nil, err
	}
	return l, nil
}

// Points returns the points the live ledger computed between from and to
// (zero: the run's start or end), oldest first, with instance detail.
func (r *Run) Points(from, to time.Time) ([]ledger.Point, error) {
	l, err := r.Replay(from, to)
	if err != nil {
		return nil, err
	}
	pts, _ := l.RangeDetail(from.Add(-time.Nanosecond), -1, ledger.Detail{})
	return pts, nil
}

// LedgerConfig is the configuration of the live run's ledger, with room
// for points points and their instance detail.
func (r *Run) LedgerConfig(points int) ledger.Config {
	return ledgerConfig(r.meta, points)
}

func ledgerConfig(m Meta, points int) ledger.Config {
	insts := max(len(m.Targets), 1)
	return ledger.Config{
		Interval:     time.Duration(m.Interval),
		Window:       time.Duration(m.Window),
		StaleAfter:   time.Duration(m.StaleAfter),
		MaxSeries:    m.MaxSeries,
		KVRequest:    m.KVRequest,
		PoolRequests: m.PoolRequests,
		History:      max(points, 1),
		// Detail for every point of a short run; a long one keeps what
		// the live ledger keeps, older points losing theirs first, so
		// memory does not grow with the run's length.
		InstanceBudget: min(max(points, 1)*insts, ledger.DefaultInstanceBudget),
		Logger:         slog.New(slog.DiscardHandler),
	}
}

// Ticks counts the recorded ticks up to to (zero: the end).
func (r *Run) Ticks(to time.Time) (int, error) {
	maxt := int64(math.MaxInt64)
	if !to.IsZero() {
		maxt = to.UnixMilli()
	}
	q, err := r.src.Querier(math.MinInt64, maxt)
	if err != nil {
		return 0, fmt.Errorf("query recording: %w", err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, nameTick))
	n := 0
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			n++
		}
	}
	return n, ss.Err()
}

// sliceSpan is the span of samples read and decoded at once: bounded
// memory whatever the run's length.
const sliceSpan = time.Minute

// Feed sends the recording up to to (zero: its end) to l, a ledger
// configured with LedgerConfig, in the order the live ledger took the
// inputs. pace, if set, is called before each tick with its time, and
// stops the feed by returning false: a replay at a given speed sleeps
// there. It returns the number of ticks sent.
func (r *Run) Feed(l *ledger.Ledger, to time.Time, pace func(tick time.Time) bool) (int, error) {
	n, _, err := feed(r.src, r.meta, r.texts, l, to, time.Time{}, pace, false)
	return n, err
}

// feed sends the recorded inputs up to to (zero: unbounded) to l, in the
// order the live ledger took them. It returns the number of ticks sent and
// the time of the last. A ledger keeps its last History points: when the
// recording has more ticks, the inputs before the span of those points
// (less a warm-up, see warmUp) are not sent, so that a resume reads what
// the ledger keeps, not the whole run. With after set (the last point a
// checkpoint restored), the inputs before a warm-up ahead of it are not
// sent either, and the ticks up to it, which the ledger does not store
// again, are not counted. With atTick, the feed stops at the last tick up
// to to: the reads placed after it, which the live ledger took after that
// tick, are not sent, and l reads what the live one read there.
func feed(q storage.Queryable, m Meta, texts *errorTexts, l *ledger.Ledger, to, after time.Time, pace func(time.Time) bool, atTick bool) (ticks int, last time.Time, err error) {
	tickTimes, err := recordedTicks(q)
	if err != nil || len(tickTimes) == 0 {
		return 0, last, err
	}
	if !to.IsZero() {
		n, _ := slices.BinarySearch(tickTimes, to.UnixMilli()+1)
		tickTimes = tickTimes[:n]
		if n == 0 {
			return 0, last, nil
		}
	}
	// Scrapes before the first tick belong to it.
	mint, maxt := tickTimes[0]-sliceSpan.Milliseconds(), tickTimes[len(tickTimes)-1]
	cfg := l.Config()
	if len(tickTimes) > cfg.History {
		mint = max(mint, tickTimes[len(tickTimes)-cfg.History]-warmUp(cfg).Milliseconds())
	}
	if !after.IsZero() {
		mint = max(mint, after.UnixMilli()-warmUp(cfg).Milliseconds())
	}
	sets := m.TargetSets
	if len(sets) == 0 && len(m.Targets) > 0 {
		ts := make([]engine.Target, len(m.Targets))
		for i, t := range m.Targets {
			ts[i] = engine.Target{Name: t.Name, URL: t.URL, Role: engine.Role(t.Role), Engine: engine.Engine(t.Engine)}
		}
		sets = []TargetSet{{Targets: ts}}
	}
	var order readOrder
	defer func() {
		if order.skipped > 0 {
			slog.Warn("recording: reads older than a read of the same target fed before them were left out", "reads", order.skipped)
		}
	}()
	nextSet := 0
	// A set recorded after the tick at From applies before the next input
	// placed after that tick.
	applySets := func(e *replayEvent) {
		for nextSet < len(sets) {
			from := sets[nextSet].From.UnixNano()
			if !sets[nextSet].From.IsZero() && (from > e.key || from == e.key && e.tick) {
				return
			}
			l.SetTargets(sets[nextSet].Targets)
			nextSet++
		}
	}
	if start := tickTimes[0] - sliceSpan.Milliseconds(); mint > start {
		primes, err := lastReads(q, start, mint, maxt, texts, lookBack(m))
		if err != nil {
			return 0, last, err
		}
		for i := range primes {
			applySets(&primes[i])
			if order.admit(&primes[i].scrape) {
				l.Record(primes[i].scrape)
			}
		}
	}
	// The next slices are read and decoded while the ledger takes this
	// one, by up to decoders goroutines at once, and handed over in
	// order: the ledger takes inputs one at a time, decoding them costs
	// about twice as much, and a resume should use every core for it.
	type slice struct {
		evs []replayEvent
		hi  int64
		err error
	}
	decoders := 1
	if _, ok := q.(*tsdb.DB); ok {
		// A read-only DB's queriers share its blocks and close them
		// with themselves: one at a time there.
		decoders = min(max(runtime.GOMAXPROCS(0)-1, 1), 4)
	}
	slicesCh := make(chan chan slice, decoders)
	busy := make(chan struct{}, decoders)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	// Nothing reads the recording once feed returns.
	defer wg.Wait()
	defer close(stop)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(slicesCh)
		step := sliceSpan.Milliseconds()
		for lo := mint; lo <= maxt; lo += step {
			hi := min(lo+step-1, maxt)
			res := make(chan slice, 1)
			select {
			case slicesCh <- res:
			case <-stop:
				return
			}
			select {
			case busy <- struct{}{}:
			case <-stop:
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-busy }()
				evs, err := readSlice(q, lo, hi, texts, lookBack(m))
				if err == nil {
					slices.SortStableFunc(evs, cmpEvents)
				}
				res <- slice{evs, hi, err}
			}()
		}
	}()
	var carry []replayEvent
	for res := range slicesCh {
		sl := <-res
		if sl.err != nil {
			return ticks, last, sl.err
		}
		evs := sl.evs
		if len(carry) > 0 {
			evs = append(carry, evs...)
			slices.SortStableFunc(evs, cmpEvents)
		}
		// A scrape whose place is after a tick not read yet waits for it.
		cut := len(evs)
		if sl.hi < maxt {
			limit := (sl.hi + 1) * int64(time.Millisecond)
			for cut > 0 && evs[cut-1].key >= limit {
				cut--
			}
		}
		for i := range evs[:cut] {
			e := &evs[i]
			applySets(e)
			if e.tick {
				if pace != nil && !pace(e.at) {
					return ticks, last, nil
				}
				l.Tick(e.at)
				if e.at.After(after) {
					ticks++
				}
				last = e.at
				if atTick && e.at.UnixMilli() == maxt {
					return ticks, last, nil
				}
				continue
			}
			if order.admit(&e.scrape) {
				// Reads follow each other as the live run read them; a
				// prime above stands for the reads left out before it.
				e.scrape.Direct = m.DirectReads
				l.Record(e.scrape)
			}
		}
		carry = append(carry[:0:0], evs[cut:]...)
	}
	return ticks, last, nil
}

// recordedTicks are the recorded ticks' times in ms, in order.
func recordedTicks(q storage.Queryable) ([]int64, error) {
	qr, err := q.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, fmt.Errorf("query recording: %w", err)
	}
	defer qr.Close()
	ss := qr.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, nameTick))
	var ts []int64
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			t, _ := it.At()
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	return slices.Compact(ts), ss.Err()
}

// warmUp is how long before the first point a ledger keeps its inputs
// must be sent for that point to be the live one: the samples its rates
// over W difference, the staleness of a target, and the scrapes after
// which a counter series that went missing is forgotten (a series seen
// again within them continues, after them it starts over). Beyond these
// the ledger's state is the absolute totals (reset-adjusted counters,
// failure counts), which then count from the warm-up on.
func warmUp(cfg ledger.Config) time.Duration {
	return 2*cfg.Window + cfg.StaleAfter + time.Duration(cfg.SeriesStaleAfter+4)*cfg.Interval
}

// replayEvent is one recorded input with its place in the live order: a
// tick at its time, a scrape right after the last tick before it reached
// the ledger.
type replayEvent struct {
	key    int64
	tick   bool
	at     time.Time
	scrape ledger.Scrape
}

func cmpEvents(a, b replayEvent) int {
	if a.key != b.key {
		if a.key < b.key {
			return -1
		}
		return 1
	}
	if a.tick != b.tick {
		if a.tick {
			return -1
		}
		return 1
	}
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return strings.Compare(a.scrape.Target, b.scrape.Target)
}

// readSlice decodes the inputs recorded in [lo, hi] ms. It reads twice:
// first the ticks and the scrapes' markers, which give each target's reads
// in time order, then every other series, whose samples walk that order
// with a cursor (a series has at most one sample per read): no lookup per
// sample, the bulk of a resume's decoding. The reads of the look ms before
// lo are decoded too, for the values the reads of changes in the span
// carry from them (changes.go), and not returned.
func readSlice(q storage.Queryable, lo, hi int64, texts *errorTexts, look int64) ([]replayEvent, error) {
	from := lo - look
	qr, err := q.Querier(from, hi)
	if err != nil {
		return nil, fmt.Errorf("query recording: %w", err)
	}
	defer qr.Close()
	ctx := context.Background()
	markers := nameTick + "|" + nameScrape + "|" + nameFailed + "|" + nameChanges
	type mark struct {
		t    int64
		v    float64
		take func(*read, float64)
	}
	marks := map[string][]mark{}
	var ticks []replayEvent
	var it chunkenc.Iterator
	ss := qr.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, markers))
	for ss.Next() {
		s := ss.At()
		ls := s.Labels()
		name := ls.Get(labels.MetricName)
		it = s.Iterator(it)
		if name == nameTick {
			for it.Next() == chunkenc.ValFloat {
				if t, v := it.At(); t >= lo && t <= hi {
					at := time.Unix(0, t*int64(time.Millisecond)+int64(v))
					ticks = append(ticks, replayEvent{key: at.UnixNano(), tick: true, at: at})
				}
			}
			continue
		}
		take, err := decoder(name, ls)
		if err != nil {
			return nil, err
		}
		target := ls.Get(labelTarget)
		ms := marks[target]
		for it.Next() == chunkenc.ValFloat {
			if t, v := it.At(); t >= from && t <= hi {
				ms = append(ms, mark{t, v, take})
			}
		}
		marks[target] = ms
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("read recording: %w", err)
		}
	}
	if err := ss.Err(); err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	// Each target's reads, in time order.
	type targetReads struct {
		times []int64
		reads []read
	}
	reads := make(map[string]*targetReads, len(marks))
	for target, ms := range marks {
		slices.SortStableFunc(ms, func(a, b mark) int { return cmp.Compare(a.t, b.t) })
		tr := &targetReads{times: make([]int64, 0, len(ms)), reads: make([]read, 0, len(ms))}
		for _, m := range ms {
			if n := len(tr.times); n == 0 || tr.times[n-1] != m.t {
				tr.times = append(tr.times, m.t)
				tr.reads = append(tr.reads, read{})
			}
			m.take(&tr.reads[len(tr.reads)-1], m.v)
		}
		reads[target] = tr
	}
	ss = qr.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, prefixRead+".+"),
		labels.MustNewMatcher(labels.MatchNotRegexp, labels.MetricName, markers))
	for ss.Next() {
		s := ss.At()
		ls := s.Labels()
		tr := reads[ls.Get(labelTarget)]
		if tr == nil {
			continue // no marker: the samples of a read lost with a torn WAL tail
		}
		take, err := decoder(ls.Get(labels.MetricName), ls)
		if err != nil {
			return nil, err
		}
		if take == nil {
			continue
		}
		it = s.Iterator(it)
		c := 0
		var cv carried
		for it.Next() == chunkenc.ValFloat {
			t, v := it.At()
			for c < len(tr.times) && tr.times[c] < t {
				cv.at(&tr.reads[c], false, 0, take)
				c++
			}
			if c == len(tr.times) {
				break
			}
			if tr.times[c] == t {
				cv.at(&tr.reads[c], true, v, take)
				c++
			}
		}
		for ; c < len(tr.times); c++ {
			cv.at(&tr.reads[c], false, 0, take)
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("read recording: %w", err)
		}
	}
	if err := ss.Err(); err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	evs := ticks
	slices.SortFunc(ticks, func(a, b replayEvent) int { return cmp.Compare(a.key, b.key) })
	for target, tr := range reads {
		for i, t := range tr.times {
			if t < lo {
				continue
			}
			if ev, ok := tr.reads[i].event(target, t, texts); ok {
				if tr.reads[i].order != 0 {
					ev.key = onTick(ticks, ev.key)
				}
				evs = append(evs, ev)
			}
		}
	}
	return evs, nil
}

// event is the scrape r holds, at its place in the live order; false when
// its marker was lost (with a torn WAL tail).
func (r *read) event(target string, ms int64, texts *errorTexts) (replayEvent, bool) {
	if !r.marked {
		return replayEvent{}, false
	}
	at := time.Unix(0, ms*int64(time.Millisecond)+int64(r.subMilli))
	s := ledger.Scrape{Target: target, Time: at, Duration: time.Duration(r.duration * float64(time.Second)),
		Bytes: int(r.bytes), Samples: int(r.samples)}
	if r.failed != "" || !r.ok {
		s.Reason = scrape.Reason(r.failed)
		// The text: ErrorsFile's (errtext.go), else the label of an
		// earlier version's recording, else the class alone.
		text, ok := texts.at(target, at)
		switch {
		case ok && text == "":
			s.Err = nil // a failure without an error, as the live one had
		case ok:
			s.Err = errors.New(text)
		case r.errText != "":
			s.Err = errors.New(r.errText)
		default:
			s.Err = fmt.Errorf("scrape failed: %s", r.failed)
		}
	} else {
		r.finish()
		r.obs.Samples = s.Samples
		s.Obs = &r.obs
	}
	return replayEvent{key: at.UnixNano() - int64(r.order), at: at, scrape: s}, true
}

// slew is the most a read's recorded place may miss its tick by: recordings
// of earlier versions measured the place on the monotonic clock and the
// tick on the wall clock, which drift apart by the clock's slew.
const slew = time.Millisecond

// onTick is key moved onto the tick just after it when it falls within
// slew before that tick: the place of a read, which is the time of the
// tick before it reached the ledger, is a tick's time; a read placed a few
// nanoseconds before its tick would be fed before it, a tick early.
func onTick(ticks []replayEvent, key int64) int64 {
	i, found := slices.BinarySearchFunc(ticks, key, func(e replayEvent, k int64) int { return cmp.Compare(e.key, k) })
	if !found && i < len(ticks) && ticks[i].key-key < int64(slew) {
		return ticks[i].key
	}
	return key
}

// read gathers one scrape's recorded samples.
type read struct {
	marked   bool
	ok       bool
	changes  bool // only the values that changed were recorded
	failed   string
	errText  string
	subMilli float64
	order    float64
	duration float64
	bytes    float64
	samples  float64
	obs      engine.Observation
}

// decoder returns what one series' samples set in a read, decided once
// from its labels; nil for a series this version does not read.
func decoder(name string, ls labels.Labels) (func(r *read, v float64), error) {
	switch name {
	case nameScrape:
		eng, role := engine.Engine(ls.Get(labelEngine)), engine.Role(ls.Get(labelRole))
		model, mode := ls.Get(labelModel), ls.Get(labelMode)
		return func(r *read, v float64) {
			r.marked, r.ok, r.subMilli = true, true, v
			r.obs.Engine, r.obs.Role, r.obs.Model, r.obs.SchedulerMode = eng, role, model, mode
		}, nil
	case nameFailed:
		reason, msg := ls.Get(labelReason), ls.Get(labelError)
		if reason == "" {
			reason = "unknown"
		}
		return func(r *read, v float64) { r.marked, r.failed, r.errText, r.subMilli = true, reason, msg, v }, nil
	case nameChanges:
		return func(r *read, _ float64) { r.changes = true }, nil
	case nameOrder:
		return func(r *read, v float64) { r.order = v }, nil
	case nameDuration:
		return func(r *read, v float64) { r.duration = v }, nil
	case nameBytes:
		return func(r *read, v float64) { r.bytes = v }, nil
	case nameSamples:
		return func(r *read, v float64) { r.samples = v }, nil
	}
	rn, ok := readNames[name]
	if !ok {
		return nil, nil // a series of a later version: not ours to read
	}
	m := rn.metric
	switch rn.part {
	case partCounter:
		id, err := strconv.ParseUint(ls.Get(labelSeries), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("recording: series %s: %w", ls, err)
		}
		return func(r *read, v float64) {
			if r.obs.Counters == nil {
				r.obs.Counters = make([]engine.CounterValue, 0, 64) // an engine's, about
			}
			r.obs.Counters = append(r.obs.Counters, engine.CounterValue{Metric: m, Series: id, Value: v})
		}, nil
	case partGauge:
		i := m.GaugeIndex()
		return func(r *read, v float64) { r.obs.Gauges[i], r.obs.HasGauges[i] = v, true }, nil
	case partBucket:
		le, err := parseLE(ls.Get("le"))
		if err != nil {
			return nil, fmt.Errorf("recording: series %s: %w", ls, err)
		}
		i := m.HistogramIndex()
		return func(r *read, v float64) {
			h := &r.obs.Histograms[i]
			if h.Buckets == nil {
				h.Buckets = make([]engine.Bucket, 0, 16)
			}
			h.Buckets = append(h.Buckets, engine.Bucket{UpperBound: le, Count: v})
			h.Present = true
		}, nil
	case partSum:
		i := m.HistogramIndex()
		return func(r *read, v float64) { h := &r.obs.Histograms[i]; h.Sum, h.HasSum = v, true }, nil
	case partCount:
		i := m.HistogramIndex()
		return func(r *read, v float64) { h := &r.obs.Histograms[i]; h.Count, h.HasCount = v, true }, nil
	}
	return nil, nil
}

// finish puts the read's values in the order the adapters give them.
func (r *read) finish() {
	slices.SortFunc(r.obs.Counters, func(a, b engine.CounterValue) int {
		if a.Metric != b.Metric {
			return int(a.Metric) - int(b.Metric)
		}
		switch {
		case a.Series < b.Series:
			return -1
		case a.Series > b.Series:
			return 1
		}
		return 0
	})
	for i := range r.obs.Histograms {
		h := &r.obs.Histograms[i]
		slices.SortFunc(h.Buckets, func(a, b engine.Bucket) int {
			switch {
			case a.UpperBound < b.UpperBound:
				return -1
			case a.UpperBound > b.UpperBound:
				return 1
			}
			return 0
		})
	}
}
