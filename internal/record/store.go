//go:build !norecord

package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/index"
	"github.com/prometheus/prometheus/tsdb/wlog"
)

// store is a recording's TSDB opened for reading, as tsdb.DBReadOnly opens
// one, but block by block: a block that does not open or whose chunks are
// cut short is left out and said (Loss), as promtool tsdb analyze names
// the block it cannot read, rather than losing the run with it; a block of
// another run makes the recording refuse to open (a folder that mixes
// runs is not one run).
type store struct {
	blocks  []*tsdb.Block
	head    *tsdb.Head
	sandbox string
	q       storage.Querier
}

// openStore opens dir's blocks and its head, read from the WAL. A block
// that fails to open is a Loss; blocks or a WAL of a run other than m's are
// an error naming them. An error reading the WAL is returned as is: the
// caller repairs it and opens again.
func openStore(dir string, m Meta) (*store, []Loss, error) {
	s := &store{}
	var lost []Loss
	var foreign []string
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read recording %s: %w", dir, err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if !isULID(e.Name()) {
			continue
		}
		b, loss := openBlock(dir, e.Name())
		if b == nil {
			lost = append(lost, loss)
			continue
		}
		if why := m.foreign(b); why != "" {
			foreign = append(foreign, e.Name()+" ("+why+")")
			_ = b.Close()
			continue
		}
		s.blocks = append(s.blocks, b)
	}
	if len(foreign) > 0 {
		s.close()
		return nil, nil, foreignError(dir, foreign)
	}
	slices.SortFunc(s.blocks, func(a, b *tsdb.Block) int { return compareInt(a.Meta().MinTime, b.Meta().MinTime) })
	if err := s.openHead(dir); err != nil {
		s.close()
		return nil, nil, err
	}
	if why := m.foreign(s.head); why != "" {
		s.close()
		return nil, nil, foreignError(dir, []string{"wal (" + why + ")"})
	}
	for i, l := range lost {
		if !l.From.IsZero() && s.head.NumSeries() > 0 && s.head.MinTime() <= l.From.UnixMilli() {
			lost[i].InWAL = true
		}
	}
	qs := make([]storage.Querier, 0, len(s.blocks)+1)
	for _, b := range s.blocks {
		q, err := tsdb.NewBlockQuerier(b, math.MinInt64, math.MaxInt64)
		if err != nil {
			s.close()
			return nil, nil, fmt.Errorf("query block %s: %w", b.Meta().ULID, err)
		}
		qs = append(qs, q)
	}
	if s.head.NumSeries() > 0 {
		q, err := tsdb.NewBlockQuerier(tsdb.NewRangeHead(s.head, math.MinInt64, math.MaxInt64), math.MinInt64, math.MaxInt64)
		if err != nil {
			s.close()
			return nil, nil, fmt.Errorf("query the WAL: %w", err)
		}
		qs = append(qs, q)
	}
	s.q = storage.NewMergeQuerier(qs, nil, storage.ChainedSeriesMerge)
	return s, lost, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ForeignError refuses a folder that mixes runs, naming what is not the
// run's own, in one line.
type ForeignError struct {
	Dir   string
	Names []string // block directories, or "wal", each with why
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s is not one run: %s not of the run its %s describes; move them out, or read each run from its own directory", e.Dir, strings.Join(e.Names, ", "), MetaFile)
}

func foreignError(dir string, names []string) error { return &ForeignError{Dir: dir, Names: names} }

// openHead reads the WAL into a head, as tsdb.DBReadOnly does: the
// m-mapped head chunks are hard-linked into a sandbox the head may cut,
// and the recording itself is not written.
func (s *store) openHead(dir string) error {
	sb, err := os.MkdirTemp(dir, "tmp_dbro_sandbox")
	if err != nil {
		return fmt.Errorf("open recording %s: %w", dir, err)
	}
	s.sandbox = sb
	if err := chunks.HardLinkChunkFiles(filepath.Join(dir, "chunks_head"), filepath.Join(sb, "chunks_head")); err != nil {
		return fmt.Errorf("open recording %s: %w", dir, err)
	}
	log := slog.New(slog.DiscardHandler)
	w, err := wlog.Open(log, filepath.Join(dir, "wal"))
	if err != nil {
		return fmt.Errorf("open recording %s: %w", dir, err)
	}
	opts := tsdb.DefaultHeadOptions()
	opts.ChunkDirRoot = sb
	h, err := tsdb.NewHead(nil, log, w, nil, opts, tsdb.NewHeadStats())
	if err != nil {
		return fmt.Errorf("open recording %s: %w", dir, err)
	}
	s.head = h
	minValid := int64(math.MinInt64)
	if n := len(s.blocks); n > 0 {
		minValid = s.blocks[n-1].Meta().MaxTime
	}
	if err := h.Init(minValid); err != nil {
		return fmt.Errorf("read WAL: %w", err)
	}
	return nil
}

func (s *store) Querier(int64, int64) (storage.Querier, error) {
	return span{s.q, math.MinInt64, math.MaxInt64}, nil
}

func (s *store) close() error {
	var errs []error
	if s.q != nil {
		errs = append(errs, s.q.Close())
	}
	for _, b := range s.blocks {
		errs = append(errs, b.Close())
	}
	if s.head != nil {
		errs = append(errs, s.head.Close())
	}
	if s.sandbox != "" {
		errs = append(errs, os.RemoveAll(s.sandbox))
	}
	return errors.Join(errs...)
}

// openBlock opens one block and checks what a truncated copy or a
// half-written block loses: its files, and the last chunk of each chunk
// file (a cut file fails there). A block that fails is returned as a Loss
// naming the file.
func openBlock(dir, name string) (*tsdb.Block, Loss) {
	bdir := filepath.Join(dir, name)
	loss := Loss{File: name}
	if bm, err := readBlockMeta(bdir); err == nil {
		loss.From, loss.To = time.UnixMilli(bm.MinTime), time.UnixMilli(bm.MaxTime)
	}
	for _, f := range []string{"meta.json", "index", "chunks"} {
		if _, err := os.Stat(filepath.Join(bdir, f)); err != nil {
			loss.File = filepath.Join(name, f)
			loss.Reason = "missing"
			if !errors.Is(err, fs.ErrNotExist) {
				loss.Reason = err.Error()
			}
			return nil, loss
		}
	}
	b, err := tsdb.OpenBlock(slog.New(slog.DiscardHandler), bdir, nil, nil)
	if err != nil {
		loss.Reason = err.Error()
		return nil, loss
	}
	if f, err := checkChunks(b, bdir); err != nil {
		_ = b.Close()
		loss.File, loss.Reason = filepath.Join(name, f), err.Error()
		return nil, loss
	}
	return b, Loss{}
}

func readBlockMeta(bdir string) (tsdb.BlockMeta, error) {
	var bm tsdb.BlockMeta
	b, err := os.ReadFile(filepath.Join(bdir, "meta.json"))
	if err != nil {
		return bm, err
	}
	return bm, json.Unmarshal(b, &bm)
}

// checkChunks reads the last chunk of each chunk file the index points
// into: the index is read whole, the chunks once per file. It returns the
// file that fails, relative to the block.
func checkChunks(b *tsdb.Block, bdir string) (string, error) {
	ir, err := b.Index()
	if err != nil {
		return "index", err
	}
	defer ir.Close()
	cr, err := b.Chunks()
	if err != nil {
		return "chunks", err
	}
	defer cr.Close()
	ctx := context.Background()
	k, v := index.AllPostingsKey()
	p, err := ir.Postings(ctx, k, v)
	if err != nil {
		return "index", err
	}
	last := map[int]chunks.Meta{}
	var sb labels.ScratchBuilder
	var metas []chunks.Meta
	for p.Next() {
		if err := ir.Series(p.At(), &sb, &metas); err != nil {
			return "index", err
		}
		for _, c := range metas {
			seg, off := chunks.BlockChunkRef(c.Ref).Unpack()
			if l, ok := last[seg]; !ok || off > offset(l) {
				last[seg] = c
			}
		}
	}
	if err := p.Err(); err != nil {
		return "index", err
	}
	files, _ := os.ReadDir(filepath.Join(bdir, "chunks"))
	for seg, c := range last {
		name := "chunks"
		if seg < len(files) {
			name = filepath.Join("chunks", files[seg].Name())
		}
		chk, _, err := cr.ChunkOrIterable(c)
		if err == nil && chk != nil {
			// A chunk cut short may still have its header: decode it.
			ci := chk.Iterator(nil)
			for ci.Next() != 0 {
			}
			err = ci.Err()
		}
		if err != nil {
			return name, fmt.Errorf("cut short or damaged: %w", err)
		}
	}
	return "", nil
}

func offset(c chunks.Meta) int { _, off := chunks.BlockChunkRef(c.Ref).Unpack(); return off }

// labeled is what a block and the head offer to tell whose they are.
type labeled interface {
	Index() (tsdb.IndexReader, error)
}

// foreign says why the samples of b are not this run's, or "".
// A recording of an earlier version carries no run id; a run resumed from
// one has RunIDSince: what ends before it is accepted without an id.
func (m Meta) foreign(b labeled) string {
	if m.RunID == "" {
		return "" // an untagged run: nothing to tell its blocks by
	}
	ir, err := b.Index()
	if err != nil {
		return ""
	}
	defer ir.Close()
	ids, err := ir.SortedLabelValues(context.Background(), labelRunID, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, nameRun))
	if err != nil {
		return ""
	}
	for _, id := range ids {
		if id != m.RunID {
			return "run " + shortID(id)
		}
	}
	if len(ids) > 0 {
		return ""
	}
	// No id: a block or WAL of an untagged recording, or of nothing.
	if bl, ok := b.(*tsdb.Block); ok {
		if !m.RunIDSince.IsZero() && bl.Meta().MaxTime <= m.RunIDSince.UnixMilli() {
			return ""
		}
		return "no run id"
	}
	return ""
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// isULID says whether name is a block's directory name: a ULID, 26
// characters of Crockford's base 32, as the TSDB names its blocks.
func isULID(name string) bool {
	if len(name) != 26 {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) {
			return false
		}
	}
	return true
}
