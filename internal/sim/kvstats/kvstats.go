// Package kvstats counts completed KV-cache copies the way FlagCX's
// FlagCXKVConnectorStats does: every transfer thread records into its own
// counters, an engine-level Stats sums its threads, and a monitor sums
// engines. Only cumulative totals are kept, so a reader can difference two
// snapshots over any interval and the byte total never goes down.
//
// The Python original appends to lists under a lock and drains them; here
// each thread owns a cache-line-padded block of atomics, so the hot path
// (RecordTransfer) is a handful of uncontended atomic adds and never blocks
// on a reader.
package kvstats

import (
	"sync"
	"sync/atomic"
	"time"
)

// Snapshot is the cumulative state of one engine (or of a sum of engines).
// Field names follow FlagCXKVConnectorStats' data keys.
type Snapshot struct {
	BytesTransferred uint64        // payload bytes of successful copies
	Transfers        uint64        // successful copies
	Descriptors      uint64        // descriptors written by successful copies
	TransferTime     time.Duration // summed duration of successful copies
	FailedTransfers  uint64        // sender-side failures
	FailedRecvs      uint64        // receiver-side failures
	ExpiredReqs      uint64        // requests whose KV expired before sending
}

// Add returns the field-wise sum; it is how a monitor aggregates engines.
func (s Snapshot) Add(o Snapshot) Snapshot {
	return Snapshot{
		BytesTransferred: s.BytesTransferred + o.BytesTransferred,
		Transfers:        s.Transfers + o.Transfers,
		Descriptors:      s.Descriptors + o.Descriptors,
		TransferTime:     s.TransferTime + o.TransferTime,
		FailedTransfers:  s.FailedTransfers + o.FailedTransfers,
		FailedRecvs:      s.FailedRecvs + o.FailedRecvs,
		ExpiredReqs:      s.ExpiredReqs + o.ExpiredReqs,
	}
}

// Sum aggregates many snapshots (all engines of a deployment).
func Sum(snaps ...Snapshot) Snapshot {
	var t Snapshot
	for _, s := range snaps {
		t = t.Add(s)
	}
	return t
}

// Thread is the counter block of one transfer thread. Its methods are safe
// for concurrent use, but the design intent is one writer per Thread: then
// no two goroutines ever touch the same cache line on the hot path.
type Thread struct {
	bytes       atomic.Uint64
	transfers   atomic.Uint64
	descriptors atomic.Uint64
	nanos       atomic.Int64
	failedXfer  atomic.Uint64
	failedRecv  atomic.Uint64
	expired     atomic.Uint64
	// Pad to two cache lines so neighbouring Threads allocated together
	// never false-share (adjacent-line prefetch pairs 64-byte lines).
	_ [128 - 7*8]byte
}

// RecordTransfer records one completed copy. Negative inputs are clamped to
// zero so a buggy caller can never make a cumulative total decrease.
func (t *Thread) RecordTransfer(d time.Duration, bytes int64, descriptors int) {
	if bytes < 0 {
		bytes = 0
	}
	if descriptors < 0 {
		descriptors = 0
	}
	if d < 0 {
		d = 0
	}
	t.bytes.Add(uint64(bytes))
	t.descriptors.Add(uint64(descriptors))
	t.nanos.Add(int64(d))
	// Transfers last: a reader that sees the new count also sees its bytes
	// (atomics are sequentially consistent in Go), so bytes/transfers never
	// shows a transfer without its payload.
	t.transfers.Add(1)
}

// RecordFailedTransfer counts a sender-side failure (P side for FlagCX).
func (t *Thread) RecordFailedTransfer() { t.failedXfer.Add(1) }

// RecordFailedRecv counts a receiver-side failure (D side for FlagCX).
func (t *Thread) RecordFailedRecv() { t.failedRecv.Add(1) }

// RecordExpiredReq counts a request whose KV expired before it was sent.
func (t *Thread) RecordExpiredReq() { t.expired.Add(1) }

func (t *Thread) snapshot() Snapshot {
	// Read transfers first (reverse of the write order) so the other fields
	// are at least as new as the count.
	n := t.transfers.Load()
	return Snapshot{
		Transfers:        n,
		BytesTransferred: t.bytes.Load(),
		Descriptors:      t.descriptors.Load(),
		TransferTime:     time.Duration(t.nanos.Load()),
		FailedTransfers:  t.failedXfer.Load(),
		FailedRecvs:      t.failedRecv.Load(),
		ExpiredReqs:      t.expired.Load(),
	}
}

// Snapshot returns this thread's cumulative totals.
func (t *Thread) Snapshot() Snapshot { return t.snapshot() }

// Stats is the engine-level aggregate: the set of its transfer threads.
// Threads are never removed, which is what keeps Snapshot monotonic.
type Stats struct {
	mu      sync.Mutex
	threads atomic.Pointer[[]*Thread] // copy-on-write, so Snapshot takes no lock
}

// New returns an engine aggregate with n threads already registered
// (n may be 0; more can be added with NewThread).
func New(n int) *Stats {
	s := &Stats{}
	ts := make([]*Thread, 0, n)
	// One allocation for all threads keeps them on distinct padded lines.
	block := make([]Thread, n)
	for i := range block {
		ts = append(ts, &block[i])
	}
	s.threads.Store(&ts)
	return s
}

// NewThread registers a new transfer thread. It is meant for thread start-up,
// not the hot path: it takes a lock and copies the thread list.
func (s *Stats) NewThread() *Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &Thread{}
	var old []*Thread
	if p := s.threads.Load(); p != nil {
		old = *p
	}
	ts := make([]*Thread, len(old), len(old)+1)
	copy(ts, old)
	ts = append(ts, t)
	s.threads.Store(&ts)
	return t
}

// Thread returns the i-th registered thread (0-based), or nil.
func (s *Stats) Thread(i int) *Thread {
	p := s.threads.Load()
	if p == nil || i < 0 || i >= len(*p) {
		return nil
	}
	return (*p)[i]
}

// Threads returns the number of registered threads.
func (s *Stats) Threads() int {
	p := s.threads.Load()
	if p == nil {
		return 0
	}
	return len(*p)
}

// Snapshot sums all threads. Each thread's counters only grow and threads are
// never removed, so successive Snapshots by one reader never decrease.
func (s *Stats) Snapshot() Snapshot {
	var total Snapshot
	p := s.threads.Load()
	if p == nil {
		return total
	}
	for _, t := range *p {
		total = total.Add(t.snapshot())
	}
	return total
}
