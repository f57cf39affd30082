package tui

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// TestScreenDraw: a frame is drawn over the last one from the top left,
// each line clearing what the last frame left, cut to the screen's height
// (24 lines when the size is unknown), with explicit carriage returns for a
// terminal in raw mode.
func TestScreenDraw(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Screen{out: w}
	var frame strings.Builder
	for i := range 30 {
		fmt.Fprintf(&frame, "line %d\n", i)
	}
	s.Draw([]byte(frame.String()))
	w.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if !strings.HasPrefix(out, "\x1b[H") || !strings.HasSuffix(out, "\x1b[J") {
		t.Errorf("frame not drawn from home to a cleared end: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(out, "\x1b[H"), "\x1b[J"), "\r\n")
	if len(lines) != 24 {
		t.Fatalf("%d lines drawn, want 24", len(lines))
	}
	for i, l := range lines {
		if l != fmt.Sprintf("line %d\x1b[K", i) {
			t.Errorf("line %d = %q", i, l)
		}
	}
}
