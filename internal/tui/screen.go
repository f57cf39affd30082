package tui

import (
	"bytes"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Screen draws whole frames on a terminal: the alternate screen with the
// cursor hidden, each frame drawn over the last (no scrolling), and stdin in
// raw mode so that q or Ctrl-C quits without a newline.
type Screen struct {
	out   *os.File
	in    *os.File
	state *term.State
	Quit  <-chan struct{}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// OpenScreen takes over the terminal out; in (may be nil) is read for keys
// when it is a terminal too.
func OpenScreen(in, out *os.File) (*Screen, error) {
	s := &Screen{out: out, in: in}
	quit := make(chan struct{})
	s.Quit = quit
	if in != nil && IsTerminal(in) {
		st, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			return nil, err
		}
		s.state = st
		go readKeys(in, quit)
	}
	io.WriteString(out, "\x1b[?1049h\x1b[?25l")
	return s, nil
}

func readKeys(in io.Reader, quit chan<- struct{}) {
	buf := make([]byte, 16)
	for {
		n, err := in.Read(buf)
		if err != nil {
			return
		}
		if bytes.ContainsAny(buf[:n], "qQ\x03\x04") {
			close(quit)
			return
		}
	}
}

// Size is the terminal's width and height, or 80×24 when unknown.
func (s *Screen) Size() (w, h int) {
	return Size(s.out)
}

// Size is f's terminal size, or 80×24 when f is not a terminal.
func Size(f *os.File) (w, h int) {
	w, h, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 || h <= 0 {
		return 80, 24
	}
	return w, h
}

// Draw replaces the screen with frame, cut to the screen's height.
func (s *Screen) Draw(frame []byte) {
	_, h := s.Size()
	lines := strings.Split(strings.TrimSuffix(string(frame), "\n"), "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	var b strings.Builder
	b.WriteString("\x1b[H")
	for i, l := range lines {
		b.WriteString(l)
		b.WriteString("\x1b[K") // clear what the last frame left on the line
		if i < len(lines)-1 {
			b.WriteString("\r\n") // raw mode: no implicit carriage return
		}
	}
	b.WriteString("\x1b[J")
	io.WriteString(s.out, b.String())
}

// Close gives the terminal back as it was.
func (s *Screen) Close() {
	io.WriteString(s.out, "\x1b[?25h\x1b[?1049l")
	if s.state != nil {
		term.Restore(int(s.in.Fd()), s.state)
	}
}
