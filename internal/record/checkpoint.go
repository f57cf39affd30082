//go:build !norecord

package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptdmon/ptdmon/internal/ledger"
)

// A record is its payload's length and CRC-32C, little-endian, then the
// payload: a tear (a process killed mid-write) or damage shows as a record
// whose length or checksum does not hold, where the checkpoint is cut.
const ckptRecordHeader = 8

var ckptTable = crc32.MakeTable(crc32.Castagnoli)

// checkpointer writes the ledger's checkpoints as the recorder's loop
// asks for them.
type checkpointer struct {
	l    *ledger.Ledger
	dir  string
	log  *slog.Logger
	keep int // points per file

	mu     sync.Mutex // the loop writes, Close closes
	f      *os.File
	num    int   // the current file's number
	size   int64 // its length: a failed write is cut back to it
	points int   // points in it
	failed bool  // a write failed: nothing more is written, so the file has no gap
}

func ckptName(dir string, num int) string {
	return filepath.Join(dir, fmt.Sprintf("%08d.ckpt", num))
}

// ckptFiles lists the checkpoint's files by number.
func ckptFiles(dir string) ([]int, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var nums []int
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".ckpt")
		if n, err := strconv.Atoi(name); ok && err == nil && !e.IsDir() {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	return nums, nil
}

// readCheckpoint returns the checkpoint's records, oldest first, and the
// number of the last file read. At the first record that does not hold
// together the checkpoint is cut: the file is truncated there and later
// files are removed, and damaged says so.
func readCheckpoint(dir string) (pieces [][]byte, last int, damaged bool, err error) {
	nums, err := ckptFiles(dir)
	if err != nil || len(nums) == 0 {
		return nil, 0, false, err
	}
	for i, num := range nums {
		last = num
		name := ckptName(dir, num)
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, 0, false, fmt.Errorf("checkpoint: %w", err)
		}
		off := 0
		for off < len(b) {
			rec, ok := ckptRecord(b[off:])
			if !ok {
				break
			}
			pieces = append(pieces, rec)
			off += ckptRecordHeader + len(rec)
		}
		if off < len(b) {
			damaged = true
			if err := os.Truncate(name, int64(off)); err != nil {
				return nil, 0, true, fmt.Errorf("checkpoint: cut the damaged tail: %w", err)
			}
			for _, later := range nums[i+1:] {
				if err := os.Remove(ckptName(dir, later)); err != nil {
					return nil, 0, true, fmt.Errorf("checkpoint: %w", err)
				}
			}
			break
		}
	}
	return pieces, last, damaged, nil
}

// ckptRecord returns the payload of the record b starts with, if whole.
func ckptRecord(b []byte) ([]byte, bool) {
	if len(b) < ckptRecordHeader {
		return nil, false
	}
	n := binary.LittleEndian.Uint32(b)
	sum := binary.LittleEndian.Uint32(b[4:])
	if uint64(n) > uint64(len(b)-ckptRecordHeader) {
		return nil, false
	}
	rec := b[ckptRecordHeader : ckptRecordHeader+int(n)]
	return rec, crc32.Checksum(rec, ckptTable) == sum
}

// openCheckpointer appends to file num of dir (0: none yet, start the
// first).
func openCheckpointer(l *ledger.Ledger, dir string, num int, log *slog.Logger) (*checkpointer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	c := &checkpointer{l: l, dir: dir, log: log, keep: l.Config().History, num: max(num, 1)}
	if err := c.open(); err != nil {
		return nil, err
	}
	// The points already in the file count toward its share.
	if b, err := os.ReadFile(ckptName(dir, c.num)); err == nil {
		for off := 0; off < len(b); {
			rec, ok := ckptRecord(b[off:])
			if !ok {
				break
			}
			if h, _, err := ledger.ParseCheckpointHeader(rec); err == nil {
				c.points += h.Points
			}
			off += ckptRecordHeader + len(rec)
		}
	}
	return c, nil
}

func (c *checkpointer) open() error {
	f, err := os.OpenFile(ckptName(c.dir, c.num), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.f, c.size, c.points = f, st.Size(), 0
	return nil
}

// take writes what the ledger sealed since the last call. It runs in the
// recorder's loop after a tick: the scrape path never waits for it.
func (c *checkpointer) take() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed || c.f == nil {
		return nil
	}
	pieces, err := c.l.Checkpoint()
	for _, p := range pieces {
		if werr := c.write(p); werr != nil {
			return werr
		}
	}
	if err != nil {
		// A piece that did not encode leaves a gap: write nothing after it.
		c.failed = true
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// write appends one record, starting the next file when this one holds a
// history; a failed write is cut back and ends the checkpoint's writing.
func (c *checkpointer) write(p []byte) error {
	if c.points >= c.keep {
		if err := c.rotate(); err != nil {
			c.failed = true
			return err
		}
	}
	rec := make([]byte, ckptRecordHeader, ckptRecordHeader+len(p))
	binary.LittleEndian.PutUint32(rec, uint32(len(p)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(p, ckptTable))
	rec = append(rec, p...)
	if _, err := c.f.Write(rec); err != nil {
		c.failed = true
		_ = c.f.Truncate(c.size)
		return fmt.Errorf("checkpoint: %w (the checkpoint stops here; a resume recomputes what follows)", err)
	}
	c.size += int64(len(rec))
	if h, _, err := ledger.ParseCheckpointHeader(p); err == nil {
		c.points += h.Points
	}
	return nil
}

// rotate starts the next file and removes all but it and the one before.
func (c *checkpointer) rotate() error {
	if err := c.f.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	c.f = nil
	c.num++
	if err := c.open(); err != nil {
		return err
	}
	nums, err := ckptFiles(c.dir)
	if err != nil {
		return err
	}
	for _, n := range nums {
		if n < c.num-1 {
			if err := os.Remove(ckptName(c.dir, n)); err != nil {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	return nil
}

func (c *checkpointer) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// restoreCheckpoint restores what the checkpoint in dir holds from from on
// into l (a ledger that keeps checkpoints) and opens it for the run's next
// points.
// It returns the points restored and the last one's time; what it could
// not use is logged, and then the checkpoint starts over from the
// ledger's history as it will be, restored and recomputed points alike.
func restoreCheckpoint(l *ledger.Ledger, dir string, from time.Time, log *slog.Logger) (n int, last time.Time, c *checkpointer) {
	pieces, num, damaged, err := readCheckpoint(dir)
	if err != nil {
		log.Warn("checkpoint unreadable; the history is recomputed from the recording", "err", err)
	}
	if damaged {
		log.Warn("checkpoint damaged (a torn or corrupted record); it is cut there and what follows is recomputed from the recording", "dir", dir)
	}
	whole := err == nil
	if err == nil && len(pieces) > 0 {
		var rerr error
		n, last, rerr = l.Restore(pieces, from)
		switch {
		case errors.Is(rerr, ledger.ErrCheckpointMismatch):
			log.Info("checkpoint of another ledger configuration or build; the history is recomputed from the recording")
			whole = false
		case rerr != nil:
			log.Warn("checkpoint damaged; the history after its last good point is recomputed from the recording", "points", n, "err", rerr)
			whole = false
		}
	}
	if !whole {
		// Start over: nothing after a piece that could not be used may
		// follow it in the file, or a later resume would restore a gap.
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("checkpoint not removed; no checkpoint is kept", "err", err)
			return n, last, nil
		}
		l.CheckpointAll()
		num = 0
	}
	c, err = openCheckpointer(l, dir, num, log)
	if err != nil {
		log.Warn("no checkpoint is kept; a later resume recomputes the history", "err", err)
		return n, last, nil
	}
	return n, last, c
}
