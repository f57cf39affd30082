// Package record keeps a run on disk and brings it back: every sample
// ptdmon read (the adapters' canonical values, each at its real time), the
// ledger's ticks and ptdmon's derived series go into a Prometheus TSDB, so
// promtool, Prometheus and Grafana open a run as they open their own data;
// the run's description is a small JSON sidecar, run.json. A replay feeds
// the recorded inputs, in the order the live ledger took them, to a fresh
// ledger: its points, and so the verdicts and capacities computed from
// them, are those of the live run (docs/runs.md).
package record

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// MetaFile is the sidecar that describes a run. It is JSON rather than
// series with labels: the configuration is text, the targets are lists, and
// a user reads it with cat or jq; it is small and rewritten whole, through
// a temporary file and a rename, so a crash leaves the old or the new one.
const MetaFile = "run.json"

// Meta is what a run was: its targets, its configuration and when it ran.
type Meta struct {
	Version string `json:"version"` // ptdmon's version
	// RunID names the run: every tick of it writes the series
	// ptd_record_run{run_id} too, so each block and the WAL say whose they
	// are, and a folder that mixes runs is refused (store.go). A run
	// recorded before run ids has none until resumed; RunIDSince is then
	// the resume, and its blocks that end before it are accepted untagged.
	RunID      string    `json:"run_id,omitempty"`
	RunIDSince time.Time `json:"run_id_since,omitzero"`
	// Config is the configuration as given (YAML or flags) and ConfigHash
	// its SHA-256: two runs with the same hash ran with the same settings.
	Config     string         `json:"config,omitempty"`
	ConfigHash string         `json:"config_hash,omitempty"`
	KVRequest  kvsize.Request `json:"kv_request"`
	// PoolRequests are the pools' own B_request (docs/pools.md).
	PoolRequests map[string]kvsize.Request `json:"pool_requests,omitempty"`
	Interval     Duration                  `json:"interval"`
	Window       Duration                  `json:"window"`
	StaleAfter   Duration                  `json:"stale_after,omitempty"`
	MaxSeries    int                       `json:"max_series,omitempty"`
	// Targets is every target the run had, Models the models they served.
	Targets []TargetMeta `json:"targets"`
	Models  []string     `json:"models,omitempty"`
	// TargetSets are the target sets in force, each from its time on
	// (file_sd may change them during a run).
	TargetSets []TargetSet `json:"target_sets,omitempty"`
	// Processes are the ptdmon processes that recorded the run: one, or one
	// more per resume.
	Processes   []Process    `json:"processes"`
	Annotations []Annotation `json:"annotations,omitempty"`
	// ErrorTextsCut is when ErrorsFile filled up: failures from then on
	// are recorded with their class but not their text.
	ErrorTextsCut time.Time `json:"error_texts_cut,omitzero"`
	// CompleteEvery is how often at most a target's read is recorded with
	// every value it read; the reads between hold only the values that
	// changed (changes.go). Zero: every read is complete (runs of earlier
	// versions).
	CompleteEvery Duration `json:"complete_read_every,omitempty"`
	// DirectReads says every process of the run read the targets' own
	// expositions rather than a TSDB's (ledger.Scrape.Direct): a replay
	// then counts a counter made between two reads from 0, as the live
	// run did. False for runs of earlier versions.
	DirectReads bool `json:"direct_reads,omitempty"`
}

// TargetMeta is one target of the run.
type TargetMeta struct {
	Name   string `json:"name"`
	URL    string `json:"url,omitempty"`
	Role   string `json:"role,omitempty"`
	Engine string `json:"engine,omitempty"`
	Model  string `json:"model,omitempty"`
}

// TargetSet is the set of targets from From on.
type TargetSet struct {
	From    time.Time       `json:"from"`
	Targets []engine.Target `json:"targets"`
}

// Process is one process's span of recording; Stop is zero while it runs
// or when the process was killed (the recording then ends at its last
// tick).
type Process struct {
	Start time.Time `json:"start"`
	Stop  time.Time `json:"stop,omitzero"`
	// ConfigHash is the hash of the settings this process ran with: a
	// resume with other settings is a change of configuration mid-run.
	ConfigHash string `json:"config_hash,omitempty"`
}

// Annotation marks a moment of the run: a benchmark's start and end.
type Annotation struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// Loss is a part of a recording that could not be read: the file, what
// was wrong with it and, when its meta.json says, the span it held.
type Loss struct {
	File     string    `json:"file"`
	Reason   string    `json:"reason"`
	From     time.Time `json:"from,omitzero"`
	To       time.Time `json:"to,omitzero"`
	Repaired bool      `json:"repaired,omitempty"` // the WAL was cut at the damage
	// InWAL: the WAL still holds the block's span (a block cut and not
	// yet truncated from it), and it is read from there.
	InWAL bool `json:"in_wal,omitempty"`
}

func (l Loss) String() string {
	s := l.File + ": " + l.Reason
	if l.InWAL {
		return s + " (its span is read from the WAL)"
	}
	if !l.From.IsZero() {
		s += fmt.Sprintf(" (%s to %s lost)", l.From.UTC().Format(time.RFC3339), l.To.UTC().Format(time.RFC3339))
	}
	return s
}

// Duration is a time.Duration written as Go writes it ("1s").
type Duration time.Duration

// MarshalJSON writes d as "1s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Start is the start of the first process.
func (m Meta) Start() time.Time {
	if len(m.Processes) == 0 {
		return time.Time{}
	}
	return m.Processes[0].Start
}

// Stop is the stop of the last process (zero when it did not stop).
func (m Meta) Stop() time.Time {
	if len(m.Processes) == 0 {
		return time.Time{}
	}
	return m.Processes[len(m.Processes)-1].Stop
}

// NewRunID is a run's id: 16 random bytes in hex.
func NewRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// HashConfig is the hash recorded as ConfigHash.
func HashConfig(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// readMeta reads dir's run.json; a directory without one is not a run.
func readMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return m, fmt.Errorf("%s: not a ptdmon recording (no %s): %w", dir, MetaFile, err)
	}
	if err != nil {
		return m, fmt.Errorf("read %s: %w", MetaFile, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, MetaFile), err)
	}
	return m, nil
}

// writeMeta replaces dir's run.json atomically.
func writeMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", MetaFile, err)
	}
	tmp, err := os.CreateTemp(dir, MetaFile+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", MetaFile, err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, MetaFile))
	}
	if werr != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", MetaFile, werr)
	}
	return nil
}
