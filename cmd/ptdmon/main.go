// Command ptdmon watches a prefill/decode-disaggregated LLM deployment and reports
// Prefill, KV-transfer and Decode requests per second on one time axis.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/ptdmon/ptdmon/internal/cli"
)

// command is one subcommand. It returns the process exit code:
// 0 ok, 1 runtime failure, 2 usage or configuration error.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

// commands is filled by the init functions of the subcommand files, so each
// subcommand lives in its own file.
var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	commands[name] = command{summary: summary, run: run}
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	stdout, stderr = &lockedWriter{w: stdout}, &lockedWriter{w: stderr}
	if len(args) == 0 {
		usage(stderr)
		return cli.ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return cli.ExitOK
	case "-version", "--version":
		fmt.Fprintln(stdout, "ptdmon", cli.Version())
		return cli.ExitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ptdmon: unknown command %q (see ptdmon -h)\n", args[0])
		return cli.ExitUsage
	}
	return cmd.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: ptdmon <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'ptdmon <command> -h' for the flags of one command, 'ptdmon -version' for the version.")
}

// lockedWriter serialises writes: a command writes to stdout and stderr
// from several goroutines (a service's logger beside the command's own
// lines), which an *os.File takes but a writer in general need not.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
