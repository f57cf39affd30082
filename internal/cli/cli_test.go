package cli

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestRun(t *testing.T) {
	f := func(name string, args []string, runErr error, wantCode int, wantOut, wantErr string) {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			c := New("inspect", "[flags] FILE", "About it.", OneArg, &out, &errb)
			c.Flags.String("role", "", "role")
			HostPort(c.Flags, "listen", "127.0.0.1:9433", "address")
			c.LogLevel(slog.LevelInfo)
			var got []string
			code := c.Run(args, func(pos []string) error { got = pos; return runErr })
			if code != wantCode || !strings.Contains(out.String(), wantOut) || !strings.Contains(errb.String(), wantErr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out.String(), errb.String(), wantCode, wantOut, wantErr)
			}
			if wantCode == 0 && wantOut == "" && (len(got) != 1 || got[0] != "f.txt") {
				t.Errorf("positional %q, want [f.txt]", got)
			}
			if errb.Len() > 0 && strings.Count(errb.String(), "\n") != 1 {
				t.Errorf("error is not one line: %q", errb.String())
			}
		})
	}
	f("flags before", []string{"-role", "prefill", "f.txt"}, nil, 0, "", "")
	f("flags after", []string{"f.txt", "-role", "prefill"}, nil, 0, "", "")
	f("double dash", []string{"--", "f.txt"}, nil, 0, "", "")
	f("help", []string{"-h"}, nil, 0, "usage: ptdmon inspect [flags] FILE\n\nAbout it.\n\nflags:\n", "")
	f("version", []string{"-version"}, nil, 0, "ptdmon ", "")
	f("misspelled", []string{"-rol", "x", "f.txt"}, nil, 2, "", "ptdmon inspect: flag provided but not defined: -rol (see ptdmon inspect -h)\n")
	f("listen without host", []string{"-listen", "9440", "f.txt"}, nil, 2, "", `invalid value "9440" for flag -listen: want host:port, e.g. 127.0.0.1:9440`)
	f("listen bad port", []string{"-listen", ":http", "f.txt"}, nil, 2, "", `port "http"`)
	f("log level", []string{"-log-level", "loud", "f.txt"}, nil, 2, "", "-log-level: want debug, info, warn or error")
	f("missing argument", nil, nil, 2, "", "missing argument FILE")
	f("extra argument", []string{"f.txt", "g.txt"}, nil, 2, "", `unexpected argument "g.txt"`)
	f("usage error", []string{"f.txt"}, Usagef("-role %q: want prefill or decode", "x"), 2, "", "(see ptdmon inspect -h)")
	f("runtime error", []string{"f.txt"}, errors.New("GET x: connection refused"), 1, "", "ptdmon inspect: GET x: connection refused\n")
	f("wrapped usage error", []string{"f.txt"}, errorsJoin(Usagef("bad")), 2, "", "bad")
}

func errorsJoin(err error) error { return errors.Join(err) }

func TestCheckHostPort(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{{"127.0.0.1:9433", true}, {":9433", true}, {"[::1]:0", true}, {"localhost:65535", true},
		{"9433", false}, {"127.0.0.1", false}, {"127.0.0.1:65536", false}, {"h:x", false}} {
		t.Run(c.in, func(t *testing.T) {
			if err := CheckHostPort(c.in); (err == nil) != c.ok {
				t.Errorf("CheckHostPort(%q) = %v, want ok=%v", c.in, err, c.ok)
			}
		})
	}
}

// TestWaitForFile runs on a fake clock: the waits are the point, not the
// seconds they would take.
func TestWaitForFile(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	t.Run("appears", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ptdmon.yaml")
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			go func() {
				time.Sleep(3 * time.Second)
				os.WriteFile(path, []byte("targets: []\n"), 0o644)
			}()
			if err := WaitForFile("-config", path, 30*time.Second, log); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d < 3*time.Second || d > 4*time.Second {
				t.Errorf("returned after %v, want just after 3 s", d)
			}
		})
	})
	t.Run("never appears", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ptdmon.yaml")
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			err := WaitForFile("-config", path, 10*time.Second, log)
			if !IsUsage(err) || !strings.Contains(err.Error(), "no such file after waiting 10s") {
				t.Errorf("err = %v, want a usage error after waiting", err)
			}
			if d := time.Since(start); d < 10*time.Second {
				t.Errorf("gave up after %v, want 10 s", d)
			}
		})
	})
	t.Run("no wait", func(t *testing.T) {
		err := WaitForFile("-config", filepath.Join(t.TempDir(), "nope.yaml"), 0, log)
		if !IsUsage(err) || !strings.HasSuffix(err.Error(), "nope.yaml: no such file") {
			t.Errorf("err = %v", err)
		}
	})
}
