package benchresult

import (
	"os"
	"path/filepath"
)

// AIPerf writes its summary and its per-request records side by side
// under these names (aiperf/common/config/config_defaults.py's
// OutputDefaults).
const (
	aiperfProfileName = "profile_export_aiperf.json"
	aiperfRecordsName = "profile_export.jsonl"
)

// Load reads the result at path as ReadFile does, and, for one of AIPerf's
// two files, its companion beside it: the figures are then AIPerf's own
// summary's, the placement and the requests the records'.
func Load(path string) (Result, error) {
	r, err := ReadFile(path)
	if err != nil {
		return r, err
	}
	other, ok := companion(path, r.Format)
	if !ok {
		return r, nil
	}
	o, err := ReadFile(other)
	if err != nil {
		return r, nil //nolint:nilerr // a companion that does not read leaves the file read alone
	}
	if r.Format == AIPerfRecords {
		r, o = o, r
	}
	if r.Format != AIPerfProfile || o.Format != AIPerfRecords {
		return r, nil
	}
	return merge(r, o), nil
}

// companion is the other AIPerf file beside path, if there is one.
func companion(path string, f Format) (string, bool) {
	var name string
	switch f {
	case AIPerfProfile:
		name = aiperfRecordsName
	case AIPerfRecords:
		name = aiperfProfileName
	default:
		return "", false
	}
	p := filepath.Join(filepath.Dir(path), name)
	if _, err := os.Stat(p); err != nil || p == path {
		return "", false
	}
	return p, true
}

// merge is AIPerf's summary placed by its records.
func merge(profile, records Result) Result {
	m := profile
	m.Clock, m.Start, m.End, m.Requests = records.Clock, records.Start, records.End, records.Requests
	m.Companion = records.File
	return m
}

// Companions are the files Load reads with the one at path.
func Companions(path string) []string {
	r, err := ReadFile(path)
	if err != nil {
		return nil
	}
	if p, ok := companion(path, r.Format); ok {
		return []string{p}
	}
	return nil
}
