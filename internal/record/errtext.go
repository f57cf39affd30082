//go:build !norecord

package record

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ErrorsFile keeps the text of failed scrapes. The TSDB holds each failure
// under its class (the reason label: timeout, refused, http_status…, a
// fixed set); the text ("read tcp 127.0.0.1:41234: connection reset", a
// byte count, a port) varies without bound, and as a label each distinct
// text would be a series of its own, kept in the head and in the
// recorder's series cache for the process's life. Here a text is written
// once per change of a target's text, as one JSON line, up to
// maxErrorsFile bytes; a replay gives each failure the text in force at
// its time, so its points say "down: <text>" as the live ones did.
const ErrorsFile = "errors.jsonl"

// maxErrorsFile bounds ErrorsFile: about 100,000 changes of a text. Past
// it texts are no longer kept (Meta.ErrorTextsCut says from when), and a
// replay names those failures by their class only.
const maxErrorsFile = 16 << 20

// maxErrorText bounds one recorded text.
const maxErrorText = 512

// errorLine is one line of ErrorsFile: from Time on, Target's failures
// read Text.
type errorLine struct {
	Target string    `json:"target"`
	Time   time.Time `json:"time"`
	Text   string    `json:"error"`
}

// errorLog appends to ErrorsFile; used by the recorder's loop only.
type errorLog struct {
	path string
	f    *os.File
	size int64
	max  int64             // maxErrorsFile (tests lower it)
	last map[string]string // each target's text last written
}

func openErrorLog(dir string) (*errorLog, error) {
	path := filepath.Join(dir, ErrorsFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", ErrorsFile, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open %s: %w", ErrorsFile, err)
	}
	return &errorLog{path: path, f: f, size: st.Size(), max: maxErrorsFile, last: map[string]string{}}, nil
}

// note keeps text as target's from at on. It reports false when the file
// is full and the text was not kept.
func (e *errorLog) note(target string, at time.Time, text string) (bool, error) {
	if last, ok := e.last[target]; ok && last == text {
		return true, nil
	}
	b, err := json.Marshal(errorLine{Target: target, Time: at, Text: text})
	if err != nil {
		return true, fmt.Errorf("encode %s: %w", ErrorsFile, err)
	}
	b = append(b, '\n')
	if e.size+int64(len(b)) > e.max {
		return false, nil
	}
	n, err := e.f.Write(b)
	e.size += int64(n)
	if err != nil {
		// A torn line is skipped when read; the next text starts a new one.
		delete(e.last, target)
		return true, fmt.Errorf("write %s: %w", ErrorsFile, err)
	}
	e.last[target] = text
	return true, nil
}

func (e *errorLog) close() error {
	if err := e.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", ErrorsFile, err)
	}
	return nil
}

// errorTexts are a recording's failure texts by target, oldest first.
type errorTexts struct {
	by  map[string][]errorLine
	cut time.Time // texts from here on were not kept (zero: all were)
}

// readErrorTexts reads dir's ErrorsFile; a recording without one (or of
// a version that labelled the texts) has none. A line torn by a crash is
// skipped.
func readErrorTexts(dir string, cut time.Time) (*errorTexts, error) {
	et := &errorTexts{by: map[string][]errorLine{}, cut: cut}
	f, err := os.Open(filepath.Join(dir, ErrorsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return et, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", ErrorsFile, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		var l errorLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Target == "" {
			continue
		}
		et.by[l.Target] = append(et.by[l.Target], l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", ErrorsFile, err)
	}
	for _, ls := range et.by {
		sort.SliceStable(ls, func(i, j int) bool { return ls[i].Time.Before(ls[j].Time) })
	}
	return et, nil
}

// at is the text of target's failure at t, false when none was kept.
func (et *errorTexts) at(target string, t time.Time) (string, bool) {
	if et == nil || !et.cut.IsZero() && !t.Before(et.cut) {
		return "", false
	}
	ls := et.by[target]
	i := sort.Search(len(ls), func(i int) bool { return ls[i].Time.After(t) })
	if i == 0 {
		return "", false
	}
	return ls[i-1].Text, true
}
