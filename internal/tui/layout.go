package tui

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ptdmon/ptdmon/internal/api"
)

// A frame's sections, by how long they stay when the terminal is short:
// what needs action first (the verdict, the down and stalled instances,
// the advice), the detail last. A section that does not fit is left out
// whole, never cut, and a line says which were.
const (
	prioAdvice = iota + 1
	prioEvidence
	prioRates
	prioQueues
	prioPools
	prioInstances
	prioPhases
	prioFailures
)

// section is one part of a frame; prio 0 is never left out.
type section struct {
	name string
	prio int
	text bytes.Buffer
}

// layout is a frame's sections in the order they are drawn.
type layout struct {
	sections []*section
}

// add appends a section and returns its buffer.
func (l *layout) add(name string, prio int) *bytes.Buffer {
	s := &section{name: name, prio: prio}
	l.sections = append(l.sections, s)
	return &s.text
}

func lines(b *bytes.Buffer) int { return bytes.Count(b.Bytes(), []byte("\n")) }

// write draws the sections that fit in height lines (0: all) with reserve
// lines kept for the instance table under them, leaving out the
// least-needed sections first, and returns the lines left for the table
// (0: no limit).
func (l *layout) write(w *bytes.Buffer, height, reserve int) int {
	kept := make([]bool, len(l.sections))
	used := 0
	for i, s := range l.sections {
		kept[i] = s.text.Len() > 0
		if kept[i] {
			used += lines(&s.text)
		}
	}
	var dropped []string
	note := func() int {
		if len(dropped) > 0 {
			return 1
		}
		return 0
	}
	for height > 0 && used+reserve+note() > height {
		worst := -1
		for i, s := range l.sections {
			if kept[i] && s.prio > 0 && (worst < 0 || s.prio >= l.sections[worst].prio) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		kept[worst] = false
		used -= lines(&l.sections[worst].text)
		dropped = append(dropped, l.sections[worst].name)
	}
	for i, s := range l.sections {
		if kept[i] {
			w.Write(s.text.Bytes())
		}
	}
	if len(dropped) > 0 {
		// In the order they are drawn.
		var names []string
		for i, s := range l.sections {
			if !kept[i] && s.text.Len() > 0 {
				names = append(names, s.name)
			}
		}
		fmt.Fprintf(w, "(to fit %d lines, left out: %s)\n", height, strings.Join(names, ", "))
	}
	if height <= 0 {
		return 0
	}
	return max(height-used-note(), 1)
}

// fleetMin is the lines the instance table needs to show what needs
// action: its counts, its head and the down and stalled instances (each
// with its note), up to half the height.
func fleetMin(t *api.InstanceTable, height int) int {
	if t == nil || height <= 0 {
		return 0
	}
	need := 4 // a blank line and the counts, a blank line and the head
	rows := 0
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Status != api.StatusDown && r.Status != api.StatusStalled && r.Up {
			break
		}
		rows++
		need++
		if rowNote(r) != "" {
			need++
		}
	}
	if rows == 0 {
		need++ // one row at least
	}
	return min(need, max(height/2, 6))
}
