// Package cli gives every ptdmon subcommand the same behaviour: `-h` prints
// the usage on stdout and exits 0; a bad flag or argument is one line on
// stderr naming it, with a pointer to `-h`, and exits 2; a runtime failure is
// one line and exits 1; `-version` prints the version; `-log-level` builds the
// logger. Flags may come before or after the positional arguments.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
)

// Exit codes of every subcommand.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// UsageError is a mistake in the command line or in the input the user
// named (a configuration file, a model config): exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usage marks err as a usage error.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Err: err}
}

// Usagef is Usage(fmt.Errorf(...)).
func Usagef(format string, a ...any) error { return Usage(fmt.Errorf(format, a...)) }

// IsUsage reports whether err is a usage error.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// Args says how many positional arguments a command takes.
type Args struct {
	Min, Max int // Max < 0: no limit
}

// Common argument counts.
var (
	NoArgs  = Args{0, 0}
	OneArg  = Args{1, 1}
	AnyArgs = Args{0, -1}
	SomeArg = Args{1, -1}
)

// Command is one subcommand's command line.
type Command struct {
	Name     string // "serve", "gen compose"
	Synopsis string // after the name: "[flags] FILE|URL"
	About    string // a paragraph printed under the synopsis by -h
	Args     Args
	Flags    *flag.FlagSet
	Stdout   io.Writer
	Stderr   io.Writer

	version  bool
	logLevel *slog.LevelVar
}

// New returns a command whose flags are to be declared on c.Flags.
func New(name, synopsis, about string, args Args, stdout, stderr io.Writer) *Command {
	c := &Command{Name: name, Synopsis: synopsis, About: about, Args: args, Stdout: stdout, Stderr: stderr,
		Flags: flag.NewFlagSet(name, flag.ContinueOnError)}
	// The flag package's own messages are replaced by one line in Run.
	c.Flags.SetOutput(io.Discard)
	c.Flags.Usage = func() {}
	c.Flags.BoolVar(&c.version, "version", false, "print the version and exit")
	return c
}

// LogLevel declares -log-level with the given default; Logger then logs at
// that level to stderr.
func (c *Command) LogLevel(def slog.Level) {
	c.logLevel = new(slog.LevelVar)
	c.logLevel.Set(def)
	c.Flags.Func("log-level", "debug, info, warn or error (default "+strings.ToLower(def.String())+")", func(s string) error {
		var l slog.Level
		if err := l.UnmarshalText([]byte(s)); err != nil {
			return errors.New("want debug, info, warn or error")
		}
		c.logLevel.Set(l)
		return nil
	})
}

// Logger is the command's logger: text on stderr, at -log-level.
func (c *Command) Logger() *slog.Logger {
	lv := slog.Leveler(slog.LevelInfo)
	if c.logLevel != nil {
		lv = c.logLevel
	}
	return slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: lv}))
}

// PrintUsage writes the synopsis, the paragraph and the flags to w.
func (c *Command) PrintUsage(w io.Writer) {
	fmt.Fprintf(w, "usage: ptdmon %s %s\n", c.Name, c.Synopsis)
	if c.About != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.About))
	}
	fmt.Fprintln(w, "\nflags:")
	// The version command takes -version like every command, but does
	// not offer it: it prints the version already.
	shown := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	c.Flags.VisitAll(func(f *flag.Flag) {
		if c.Name != "version" || f.Name != "version" {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue // as declared, not as parsed so far
		}
	})
	n := 0
	shown.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintln(w, "  none")
		return
	}
	shown.SetOutput(w)
	shown.PrintDefaults()
}

// Run parses args, then calls run with the positional arguments and turns
// its error into the exit code and one line on stderr.
func (c *Command) Run(args []string, run func(pos []string) error) int {
	pos, err := c.parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.PrintUsage(c.Stdout)
		return ExitOK
	case err != nil:
		return c.Fail(Usage(err))
	case c.version:
		fmt.Fprintln(c.Stdout, "ptdmon", Version())
		return ExitOK
	}
	switch {
	case len(pos) < c.Args.Min && c.Args.Min == 1:
		return c.Fail(Usagef("missing argument %s", argName(c.Synopsis)))
	case len(pos) < c.Args.Min:
		return c.Fail(Usagef("want at least %d arguments, got %d", c.Args.Min, len(pos)))
	case c.Args.Max >= 0 && len(pos) > c.Args.Max:
		return c.Fail(Usagef("unexpected argument %q", pos[c.Args.Max]))
	}
	return c.Fail(run(pos))
}

// Fail prints err (if any) as one line and returns its exit code.
func (c *Command) Fail(err error) int {
	if err == nil {
		return ExitOK
	}
	if IsUsage(err) {
		fmt.Fprintf(c.Stderr, "ptdmon %s: %v (see ptdmon %s -h)\n", c.Name, err, c.Name)
		return ExitUsage
	}
	fmt.Fprintf(c.Stderr, "ptdmon %s: %v\n", c.Name, err)
	return ExitFailure
}

// parse lets flags follow the positional arguments, as in
// "ptdmon inspect FILE -role prefill"; the flag package stops at the first
// non-flag. "--" ends the flags.
func (c *Command) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := c.Flags.Parse(args); err != nil {
			return nil, err
		}
		args = c.Flags.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// argName is the last word of the synopsis: "FILE|URL" in "[flags] FILE|URL".
func argName(synopsis string) string {
	f := strings.Fields(synopsis)
	if len(f) == 0 {
		return "argument"
	}
	return f[len(f)-1]
}

// HostPort declares a flag holding a listen address host:port, checked while
// parsing so that "-listen 9440" is a usage error naming the flag.
func HostPort(fs *flag.FlagSet, name, def, usage string) *string {
	v := def
	if def != "" {
		usage += " (default " + strconv.Quote(def) + ")"
	}
	fs.Func(name, usage, func(s string) error {
		if err := CheckHostPort(s); err != nil {
			return err
		}
		v = s
		return nil
	})
	return &v
}

// CheckHostPort accepts host:port with a numeric port; the host may be empty
// (all interfaces).
func CheckHostPort(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		if !strings.Contains(s, ":") {
			return fmt.Errorf("want host:port, e.g. 127.0.0.1:%s", s)
		}
		return fmt.Errorf("want host:port: %w", err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return fmt.Errorf("port %q: want a number from 0 to 65535", port)
	}
	return nil
}
