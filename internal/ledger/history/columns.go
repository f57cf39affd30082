package history

import (
	"math"
	"math/bits"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger/point"
)

// instanceSeries are the values of an InstancePoint that a column block
// stores, one float64 column each; the order is the column order.
var instanceSeries = [...]func(*point.InstancePoint) *point.Num{
	func(p *point.InstancePoint) *point.Num { return &p.Instant },
	func(p *point.InstancePoint) *point.Num { return &p.Window },
	func(p *point.InstancePoint) *point.Num { return &p.KVBytes },
	func(p *point.InstancePoint) *point.Num { return &p.KVBytesW },
	func(p *point.InstancePoint) *point.Num { return &p.Running },
	func(p *point.InstancePoint) *point.Num { return &p.Waiting },
	func(p *point.InstancePoint) *point.Num { return &p.Queues.Bootstrap },
	func(p *point.InstancePoint) *point.Num { return &p.Queues.Inflight },
	func(p *point.InstancePoint) *point.Num { return &p.Queues.Prealloc },
	func(p *point.InstancePoint) *point.Num { return &p.Queues.Transfer },
	func(p *point.InstancePoint) *point.Num { return &p.KVUsage },
	func(p *point.InstancePoint) *point.Num { return &p.PromptTPS },
	func(p *point.InstancePoint) *point.Num { return &p.GenTPS },
}

const numSeries = len(instanceSeries)

// absentMask has one bit per series; it must hold numSeries bits.
type absentMask uint16

// A compile-time check that absentMask has a bit for every series: the
// index is out of range once numSeries exceeds 16.
var _ = [1]struct{}{}[numSeries/17]

// noTime stands for the zero time.Time in a time column.
const noTime = math.MinInt64

// maxZones bounds the time zones a history tells apart (seven bits of a
// row's flags); window times in any further zone read back in the first
// zone seen. Sample times come from the clock or a TSDB: one zone in practice.
const maxZones = 1 << 7

// flagUp is the bit of an instance's flags that says it was up; the next
// seven hold the index of its window times' zone, the two above them its
// sleep state's code (sleepCode).
const (
	flagUp     = 1
	flagZone   = 1 // shift of the zone
	flagSleep  = 8 // shift of the sleep code
	sleepCodes = 4
)

// sleepStates are the sleep states by code; code 0 is an instance that
// serves (or does not say).
var sleepStates = [sleepCodes]string{"", point.SleepPaused, point.SleepWeightsOffloaded, point.SleepDiscardAll}

// sleepCode is the code of sleep state s; a state this history does not
// know reads back as paused, still asleep.
func sleepCode(s string) uint8 {
	for i, v := range sleepStates {
		if v == s {
			return uint8(i)
		}
	}
	return 1
}

// block is the per-instance detail of one point, stored by column: one
// float64 column per series, a row of instance ids interned in the
// history's table (name, role and engine once per instance), absent values
// as a bit per series with their reasons as codes into the history's table,
// and the window times as Unix nanoseconds. It is the row group a
// recording of a run would write: one writer, per-series columns stamped
// with the point's time.
type block struct {
	inst   []uint32     // instance ids, one per row
	flags  []uint16     // flagUp | zone<<flagZone | sleep code<<flagSleep
	vals   []float64    // numSeries columns of len(inst) values: vals[s*n+i]
	absent []absentMask // per row: bit s set when series s is absent
	why    []uint32     // reason codes of the absent values, row by row, in series order
	from   []int64      // WindowFrom, Unix ns or noTime
	to     []int64      // WindowTo, Unix ns or noTime
}

// instanceKey is what a block stores once per instance rather than per row.
type instanceKey struct{ target, role, engine, pool string }

// columns are the tables a history's blocks share.
type columns struct {
	instances interner[instanceKey]
	reasons   interner[string]
	zones     []*time.Location
}

// compact stores ins as a block, taking a reference on every name and
// reason it holds.
func (c *columns) compact(ins []point.InstancePoint) *block {
	n := len(ins)
	nAbsent := 0
	for i := range ins {
		for _, f := range instanceSeries {
			if !f(&ins[i]).OK() {
				nAbsent++
			}
		}
	}
	b := &block{
		inst:   make([]uint32, n),
		flags:  make([]uint16, n),
		vals:   make([]float64, numSeries*n),
		absent: make([]absentMask, n),
		why:    make([]uint32, 0, nAbsent),
		from:   make([]int64, n),
		to:     make([]int64, n),
	}
	for i := range ins {
		p := &ins[i]
		b.inst[i] = c.instances.ref(instanceKey{p.Target, p.Role, p.Engine, p.Pool})
		var fl uint16
		if p.Up {
			fl = flagUp
		}
		// Both window times are sample times of one target: one zone.
		zone := c.zone(p.WindowTo)
		b.flags[i] = fl | uint16(zone)<<flagZone | uint16(sleepCode(p.Sleep))<<flagSleep
		b.from[i], b.to[i] = unixNano(p.WindowFrom), unixNano(p.WindowTo)
		for s, f := range instanceSeries {
			v := f(p)
			b.vals[s*n+i] = v.V
			if !v.OK() {
				b.absent[i] |= 1 << s
				b.why = append(b.why, c.reasons.ref(v.Why))
			}
		}
	}
	return b
}

// release drops the block's references on names and reasons.
func (c *columns) release(b *block) {
	for _, id := range b.inst {
		c.instances.unref(id)
	}
	for _, r := range b.why {
		c.reasons.unref(r)
	}
}

// materialise rebuilds the InstancePoints b was compacted from, or only
// the one of target when it is set (none when b has no such instance).
func (c *columns) materialise(b *block, target string) []point.InstancePoint {
	n := len(b.inst)
	if target != "" {
		for i, id := range b.inst {
			if c.instances.get(id).target == target {
				return c.rows(b, i, i+1)
			}
		}
		return nil
	}
	return c.rows(b, 0, n)
}

// rows rebuilds the InstancePoints of rows [from, to) of b.
func (c *columns) rows(b *block, from, to int) []point.InstancePoint {
	n := len(b.inst)
	out := make([]point.InstancePoint, to-from)
	w := 0 // b.why's index of the next absent value
	for i := 0; i < from; i++ {
		w += bits.OnesCount16(uint16(b.absent[i]))
	}
	for i := from; i < to; i++ {
		p := &out[i-from]
		k := c.instances.get(b.inst[i])
		p.Target, p.Role, p.Engine, p.Pool = k.target, k.role, k.engine, k.pool
		p.Up = b.flags[i]&flagUp != 0
		p.WaitingDeferred = point.Absent(point.WhyNotKeptDetail)
		p.Sleep = sleepStates[(b.flags[i]>>flagSleep)%sleepCodes]
		loc := c.zones[(b.flags[i]>>flagZone)%maxZones]
		p.WindowFrom, p.WindowTo = fromUnixNano(b.from[i], loc), fromUnixNano(b.to[i], loc)
		for s, f := range instanceSeries {
			v := f(p)
			v.V = b.vals[s*n+i]
			if b.absent[i]&(1<<s) != 0 {
				v.Why = c.reasons.get(b.why[w])
				w++
			}
		}
	}
	return out
}

// zone returns the index of t's time zone, adding it on first sight.
func (c *columns) zone(t time.Time) uint8 {
	loc := t.Location()
	for i, z := range c.zones {
		if z == loc {
			return uint8(i)
		}
	}
	if len(c.zones) < maxZones {
		c.zones = append(c.zones, loc)
		return uint8(len(c.zones) - 1)
	}
	return 0
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return noTime
	}
	return t.UnixNano()
}

func fromUnixNano(ns int64, loc *time.Location) time.Time {
	if ns == noTime {
		return time.Time{}
	}
	return time.Unix(0, ns).In(loc)
}

// interner gives each distinct value a small code, counting the references
// to it so that a code whose last reference left is reused: the tables stay
// as small as the history's distinct values, however long the run.
type interner[T comparable] struct {
	codes map[T]uint32
	vals  []T
	refs  []int32
	free  []uint32
}

func (t *interner[T]) ref(v T) uint32 {
	if c, ok := t.codes[v]; ok {
		t.refs[c]++
		return c
	}
	if t.codes == nil {
		t.codes = make(map[T]uint32)
	}
	var c uint32
	if n := len(t.free); n > 0 {
		c, t.free = t.free[n-1], t.free[:n-1]
		t.vals[c], t.refs[c] = v, 1
	} else {
		c = uint32(len(t.vals))
		t.vals, t.refs = append(t.vals, v), append(t.refs, 1)
	}
	t.codes[v] = c
	return c
}

func (t *interner[T]) unref(c uint32) {
	if t.refs[c]--; t.refs[c] > 0 {
		return
	}
	var zero T
	delete(t.codes, t.vals[c])
	t.vals[c] = zero
	t.free = append(t.free, c)
}

func (t *interner[T]) get(c uint32) T { return t.vals[c] }
