package scrape

import (
	"fmt"
	"io"
	"math/bits"
	"sync"
)

// Body buffers come from pools of power-of-two sizes and grow by doubling,
// never past the target's limit. A body's bytes above FreeBytes are drawn
// from a Budget shared by every target, so the memory held by bodies in
// flight is bounded by configuration, not by what targets send.

// FreeBytes of every body are not drawn from the budget: a target with an
// ordinary exposition is never starved by others sending endless ones.
const FreeBytes = 1 << 20

// DefaultBodyBudget bounds the bytes of all bodies in flight together.
const DefaultBodyBudget = 128 << 20

const (
	minClass = 16 // 64 KiB
	maxClass = 40
)

// free holds idle buffers by size class. Unlike a sync.Pool it is not
// emptied by every garbage collection, so a steady stream of scrapes
// allocates no buffer at all; it keeps at most freePerClass buffers of a
// class, so idle memory stays bounded by the sizes in use, not by targets.
var free [maxClass + 1]chan []byte

const freePerClass = 16

// maxFreeClass: buffers above FreeBytes are rare (bodies past 1 MiB) and
// are left to the GC rather than kept idle.
const maxFreeClass = 20

func init() {
	for c := minClass; c <= maxFreeClass; c++ {
		free[c] = make(chan []byte, freePerClass)
	}
}

func class(n int) int {
	c := bits.Len(uint(n - 1))
	return max(c, minClass)
}

// getBuf returns an empty buffer of capacity at least n (n ≤ 1<<maxClass).
func getBuf(n int) []byte {
	c := class(n)
	if c > maxFreeClass {
		return make([]byte, 0, 1<<c)
	}
	select {
	case b := <-free[c]:
		return b[:0]
	default:
		return make([]byte, 0, 1<<c)
	}
}

// putBuf returns a buffer taken with getBuf; others are left to the GC.
func putBuf(b []byte) {
	c := cap(b)
	if c < 1<<minClass || c&(c-1) != 0 || bits.Len(uint(c))-1 > maxClass {
		return
	}
	if bits.Len(uint(c))-1 > maxFreeClass {
		return
	}
	select {
	case free[bits.Len(uint(c))-1] <- b[:0]:
	default: // enough idle buffers of this size: left to the GC
	}
}

// Budget is the number of body bytes all fetches together may hold.
// The zero value and nil allow nothing beyond FreeBytes per body.
type Budget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Used returns the bytes currently drawn.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

func (b *Budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *Budget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// body is one fetch's buffer and what it draws from the budget.
type body struct {
	buf    []byte
	budget *Budget // nil: no shared budget (one-off fetches)
	drawn  int64
}

// charge draws what a buffer of capacity c needs beyond FreeBytes.
func (b *body) charge(c int) bool {
	need := max(int64(c)-FreeBytes, 0) - b.drawn
	if need <= 0 || b.budget == nil {
		return true
	}
	if !b.budget.take(need) {
		return false
	}
	b.drawn += need
	return true
}

// release gives the buffer back to the pool and returns what was drawn:
// between scrapes a target holds no body, so the memory of bodies is that
// of the fetches in flight, not of the targets.
func (b *body) release() {
	putBuf(b.buf)
	b.buf = nil
	if b.drawn > 0 {
		b.budget.give(b.drawn)
		b.drawn = 0
	}
}

// maxPresize bounds the buffer a Content-Length alone may ask for: a
// larger body grows by doubling as it arrives, so a false header does not
// hold memory for bytes that never come.
const maxPresize = 16 << 20

// errTooLarge and errBudget are returned by readFrom.
var (
	errTooLarge = fmt.Errorf("body exceeds the limit")
	errBudget   = fmt.Errorf("bodies in flight exceed the body budget")
)

// readFrom reads r to its end into b.buf, growing it by doubling but never
// to more than limit+1 bytes (the extra byte tells a body of exactly limit
// bytes from a longer one). A body that announces its length (size ≥ 0) gets
// a buffer of that size up front, so it is read in as few calls as the
// socket allows and never copied; the announced size is only a hint, the
// limit and the budget hold whatever the body turns out to be.
func (b *body) readFrom(r io.Reader, limit, size int64) (int, error) {
	if want := min(size+1, limit+1); size >= 0 && size <= maxPresize && int64(cap(b.buf)) < want {
		if !b.charge(1 << class(int(want))) {
			return 0, errBudget
		}
		putBuf(b.buf)
		b.buf = getBuf(int(want))
	}
	if b.buf == nil {
		b.buf = getBuf(32 << 10)
	}
	for {
		if len(b.buf) == cap(b.buf) {
			if int64(len(b.buf)) > limit {
				return len(b.buf), errTooLarge
			}
			next := int(min(int64(2*cap(b.buf)), limit+1))
			if !b.charge(next) {
				return len(b.buf), errBudget
			}
			var nb []byte
			if next&(next-1) == 0 && next >= 1<<minClass {
				nb = getBuf(next)
			} else {
				nb = make([]byte, 0, next) // the last step to limit+1: exact, not pooled
			}
			nb = append(nb, b.buf...)
			putBuf(b.buf)
			b.buf = nb
		}
		n, err := r.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			if int64(len(b.buf)) > limit {
				return len(b.buf), errTooLarge
			}
			return len(b.buf), nil
		}
		if err != nil {
			return len(b.buf), err
		}
	}
}
