package benchresult

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The flags by which the tools name where their results go: a file, or a
// directory the result is written into (docs/bench.md#recording).
var (
	fileFlags = []string{"--result-filename", "--output-file", "--output-path"}
	dirFlags  = []string{"--result-dir", "--artifact-dir", "--output-dir", "--output-path"}
)

// preference orders the formats when a run left several: per-request
// wall-clock times first (they place the benchmark exactly), then the
// summaries.
var preference = []Format{AIPerfRecords, LLMDBenchmark, GuideLLM, VLLM, SGLang, InferencePerf, AIPerfProfile}

// maxScan bounds the files looked at under one directory.
const maxScan = 2000

// Find is the result file a load generator's command line args wrote,
// run from dir since the given time: the files its output flags name, and
// the result files written since then in dir and the directories its flags
// name (three levels deep). Several: the preferred format, then the newest.
// "" when there is none.
func Find(args []string, dir string, since time.Time) string {
	files, dirs := flagPaths(args, dir)
	dirs = append(dirs, dir)
	return pick(append(files, scan(dirs, since)...), since)
}

// FindIn is the result file at path (a file), or the one written since
// the given time under path (a directory), as Find chooses.
func FindIn(path string, since time.Time) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return path, nil
	}
	if p := pick(scan([]string{path}, since), since); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s: no benchmark result written since %s", path, since.Format(time.RFC3339))
}

func flagPaths(args []string, dir string) (files, dirs []string) {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	val := func(i int, name string) (string, bool) {
		a := args[i]
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
		return "", false
	}
	var resultDir, resultFile string
	for i := range args {
		for _, f := range fileFlags {
			if v, ok := val(i, f); ok {
				files = append(files, abs(v))
				if f == "--result-filename" {
					resultFile = v
				}
			}
		}
		for _, f := range dirFlags {
			if v, ok := val(i, f); ok {
				dirs = append(dirs, abs(v))
				if f == "--result-dir" {
					resultDir = v
				}
			}
		}
	}
	// vLLM joins --result-filename to --result-dir.
	if resultDir != "" && resultFile != "" && !filepath.IsAbs(resultFile) {
		files = append(files, filepath.Join(abs(resultDir), resultFile))
	}
	return files, dirs
}

func scan(dirs []string, since time.Time) []string {
	var out []string
	for _, d := range dirs {
		n := 0
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil //nolint:nilerr // an unreadable entry is no result; the walk goes on
			}
			if e.IsDir() {
				if rel, _ := filepath.Rel(d, p); strings.Count(rel, string(filepath.Separator)) >= 3 {
					return filepath.SkipDir
				}
				return nil
			}
			if n++; n > maxScan {
				return filepath.SkipAll
			}
			switch strings.ToLower(filepath.Ext(p)) {
			case ".json", ".jsonl", ".yaml", ".yml":
			default:
				return nil
			}
			if info, err := e.Info(); err == nil && !info.ModTime().Before(since) {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// pick is the preferred readable result among paths written since.
func pick(paths []string, since time.Time) string {
	type cand struct {
		path string
		rank int
		mod  time.Time
	}
	var cs []cand
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		info, err := os.Stat(p)
		if err != nil || info.IsDir() || info.ModTime().Before(since) {
			continue
		}
		r, err := ReadFile(p)
		if err != nil {
			continue
		}
		cs = append(cs, cand{p, slices.Index(preference, r.Format), info.ModTime()})
	}
	if len(cs) == 0 {
		return ""
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), b.mod.Compare(a.mod))
	})
	return cs[0].path
}

// KeptDir is the directory of a recording that keeps its benchmark result.
const KeptDir = "bench"

// Keep copies the result file at path into the recording dir, and returns
// the copy's path: a recording carries its client view with it.
func Keep(dir, path string) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, KeptDir), 0o755); err != nil {
		return "", fmt.Errorf("keep %s: %w", path, err)
	}
	dst := filepath.Join(dir, KeptDir, filepath.Base(path))
	in, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("keep %s: %w", path, err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return "", fmt.Errorf("keep %s: %w", path, err)
	}
	_, cerr := io.Copy(out, in)
	if err := errors.Join(cerr, out.Close()); err != nil {
		return "", fmt.Errorf("keep %s: %w", path, err)
	}
	return dst, nil
}

// Kept is the benchmark result a recording keeps (the preferred one when
// it keeps a file and its companion), "" when it keeps none.
func Kept(dir string) string {
	es, err := os.ReadDir(filepath.Join(dir, KeptDir))
	if err != nil {
		return ""
	}
	var paths []string
	for _, e := range es {
		if !e.IsDir() {
			paths = append(paths, filepath.Join(dir, KeptDir, e.Name()))
		}
	}
	if p := pick(paths, time.Time{}); p != "" {
		return p
	}
	if len(paths) > 0 {
		// None reads: the report says why of the first.
		return paths[0]
	}
	return ""
}
