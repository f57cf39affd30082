package scrape

import (
	"errors"
	"io"
	"sort"
	"sync"
)

// Body buffers grow by doubling, never past the target's limit. Buffers up
// to FreeBytes come from pools of a few sizes (classSizes): an ordinary engine's
// exposition is well under a MiB. Larger ones belong to a Budget shared by
// every target, which counts both the buffers in use and those it keeps for
// reuse: all large body memory together stays within the budget, and
// targets that send huge bodies every scrape reuse the same buffers instead
// of making the GC chase fresh ones.

// FreeBytes is the largest buffer outside the budget: a target with an
// ordinary exposition is never starved by others sending endless ones.
const FreeBytes = 1 << 20

// DefaultBodyBudget bounds the bytes of all large body buffers together.
const DefaultBodyBudget = 64 << 20

// classSizes are the capacities of the pooled buffers: the powers of two
// from 64 KiB to FreeBytes and the steps halfway between them (1.5×), so a
// body leaves at most a third of its buffer unused instead of half. A
// vLLM API server's 182 KB exposition takes 192 KiB, not 256 KiB: when the
// machine is slow and a hundred reads are in flight at once, 6 MiB less.
var classSizes = [...]int{64 << 10, 96 << 10, 128 << 10, 192 << 10, 256 << 10, 384 << 10, 512 << 10, 768 << 10, FreeBytes}

// free holds idle small buffers by size class. Unlike a sync.Pool it is not
// emptied by every garbage collection, so a steady stream of scrapes
// allocates no buffer at all; it keeps at most freePerClass buffers of a
// class, so idle memory stays bounded by the sizes in use, not by targets.
var free [len(classSizes)]chan []byte

const freePerClass = 16

func init() {
	for c := range free {
		free[c] = make(chan []byte, freePerClass)
	}
}

// classOf returns the smallest class of at least n bytes, n ≤ FreeBytes.
func classOf(n int) int {
	c := 0
	for classSizes[c] < n {
		c++
	}
	return c
}

// getSmall returns an empty buffer of the smallest class of at least n
// bytes, n ≤ FreeBytes.
func getSmall(n int) []byte {
	c := classOf(n)
	select {
	case b := <-free[c]:
		return b[:0]
	default:
		return make([]byte, 0, classSizes[c])
	}
}

func putSmall(b []byte) {
	n := cap(b)
	if n > FreeBytes {
		return
	}
	c := classOf(n)
	if classSizes[c] != n {
		return
	}
	select {
	case free[c] <- b[:0]:
	default: // enough idle buffers of this size: left to the GC
	}
}

// Budget is the memory all large body buffers together may take, in use or
// kept for reuse.
type Budget struct {
	mu    sync.Mutex
	limit int64
	used  int64            // bytes of buffers in use and kept
	kept  map[int][][]byte // idle buffers by capacity
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit, kept: map[int][][]byte{}} }

// Used returns the bytes of large buffers in use or kept.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// alloc returns an empty buffer of capacity at least n: the smallest kept
// one that is large enough, or a new one, or false when n more bytes do not
// fit even after dropping the kept buffers that are too small. Handing out
// a larger kept buffer rather than making a new one keeps targets that send
// huge bodies every scrape from producing garbage.
func (b *Budget) alloc(n int) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	best := -1
	for c, l := range b.kept {
		if c >= n && len(l) > 0 && (best < 0 || c < best) {
			best = c
		}
	}
	if best >= 0 {
		l := b.kept[best]
		buf := l[len(l)-1]
		b.kept[best] = l[:len(l)-1]
		return buf[:0], true
	}
	// Every kept buffer is too small: drop them, largest first, until n fits.
	sizes := make([]int, 0, len(b.kept))
	for c, l := range b.kept {
		if len(l) > 0 {
			sizes = append(sizes, c)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(sizes)))
	for _, c := range sizes {
		for len(b.kept[c]) > 0 && b.used+int64(n) > b.limit {
			b.kept[c] = b.kept[c][:len(b.kept[c])-1]
			b.used -= int64(c)
		}
	}
	if b.used+int64(n) > b.limit {
		return nil, false
	}
	b.used += int64(n)
	return make([]byte, 0, n), true
}

// free takes back a buffer from alloc and keeps it for reuse.
func (b *Budget) free(buf []byte) {
	b.mu.Lock()
	b.kept[cap(buf)] = append(b.kept[cap(buf)], buf[:0])
	b.mu.Unlock()
}

// body is one fetch's buffer: buf is a view of full no longer than the
// target's limit.
type body struct {
	buf    []byte
	full   []byte
	budget *Budget // nil: large buffers are allocated and left to the GC
}

func (b *body) get(n int) ([]byte, bool) {
	switch {
	case n <= FreeBytes:
		return getSmall(n), true
	case b.budget == nil:
		return make([]byte, 0, n), true
	}
	return b.budget.alloc(n)
}

func (b *body) put(full []byte) {
	switch {
	case cap(full) <= FreeBytes:
		putSmall(full)
	case b.budget != nil:
		b.budget.free(full)
	}
}

// release gives the buffer back: between scrapes a target holds no body,
// so the memory of bodies is that of the fetches in flight, not of the
// targets.
func (b *body) release() {
	if b.full != nil {
		b.put(b.full)
		b.full = nil
	}
	b.buf = nil
}

// maxPresize bounds the buffer a Content-Length alone may ask for: a
// larger body grows by doubling as it arrives, so a false header does not
// hold memory for bytes that never come.
const maxPresize = 16 << 20

var (
	errTooLarge = errors.New("body exceeds the limit")
	errBudget   = errors.New("bodies in flight exceed the body budget")
)

// readFrom reads r to its end into b.buf, growing it by doubling up to
// limit bytes and never further: one more byte past a full buffer of limit
// bytes makes the body too large. A body that announces its length
// (size ≥ 0) gets a buffer of that size and one byte more up front, so it is
// read in as few calls as the socket allows and never copied; the announced
// size is only a hint, the limit and the budget hold whatever the body turns
// out to be.
func (b *body) readFrom(r io.Reader, limit, size int64) (int, error) {
	if want := min(size+1, limit); size >= 0 && size <= maxPresize && int64(cap(b.full)) < want {
		full, ok := b.get(int(want))
		if !ok {
			return 0, errBudget
		}
		if b.full != nil {
			b.put(b.full)
		}
		b.full = full
	}
	if b.full == nil {
		b.full, _ = b.get(int(min(32<<10, limit)))
	}
	b.buf = b.full[:0:min(int64(cap(b.full)), limit)]
	for {
		if len(b.buf) == cap(b.buf) {
			if int64(len(b.buf)) >= limit {
				var one [1]byte
				if _, err := io.ReadAtLeast(r, one[:], 1); err == io.EOF {
					return len(b.buf), nil
				} else if err != nil {
					return len(b.buf), err
				}
				return len(b.buf), errTooLarge
			}
			full, ok := b.get(int(min(int64(2*cap(b.buf)), limit)))
			if !ok {
				return len(b.buf), errBudget
			}
			full = append(full, b.buf...)
			b.put(b.full)
			b.full = full
			b.buf = full[:len(full):min(int64(cap(full)), limit)]
		}
		n, err := r.Read(b.buf[len(b.buf):cap(b.buf)])
		b.buf = b.buf[:len(b.buf)+n]
		if err == io.EOF {
			return len(b.buf), nil
		}
		if err != nil {
			return len(b.buf), err
		}
	}
}
