package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEverySubcommandAlike: -h prints the usage on stdout and exits 0, a
// misspelled flag is one line naming it and exits 2, -version exits 0.
func TestEverySubcommandAlike(t *testing.T) {
	names := []string{"gen prometheus", "gen rules", "gen grafana", "gen compose"}
	for n := range commands {
		names = append(names, n)
	}
	for _, name := range names {
		args := strings.Fields(name)
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			code, out, errs := runCmd(append(args, "-h")...)
			if code != 0 || !strings.HasPrefix(out, "usage: ptdmon "+name) || errs != "" {
				t.Errorf("-h: exit %d, stdout %.80q, stderr %q; want 0 and the usage on stdout", code, out, errs)
			}
			code, out, errs = runCmd(append(args, "-bogus")...)
			if code != 2 || out != "" || strings.Count(errs, "\n") != 1 ||
				!strings.Contains(errs, "-bogus") || !strings.Contains(errs, "see ptdmon "+name+" -h") {
				t.Errorf("-bogus: exit %d, stderr %q; want 2 and one line naming -bogus", code, errs)
			}
			code, out, _ = runCmd(append(args, "-version")...)
			if code != 0 || !strings.HasPrefix(out, "ptdmon ") {
				t.Errorf("-version: exit %d, stdout %q", code, out)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	// A port nobody listens on: take one and release it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"serve listen without host", []string{"serve", "-listen", "9440", "-prefill", "http://127.0.0.1:1/metrics"}, 2, `invalid value "9440" for flag -listen: want host:port, e.g. 127.0.0.1:9440`},
		{"demo listen without host", []string{"demo", "-listen", "9440"}, 2, "flag -listen"},
		{"serve negative SLO", []string{"serve", "-slo-e2e", "-1", "-prefill", "http://127.0.0.1:1/metrics"}, 2, "-slo-e2e: slo.e2e -1: want a threshold in seconds ≥ 0"},
		{"demo headroom 1", []string{"demo", "-headroom", "1"}, 2, "-headroom: headroom 1: want 0 ≤ headroom < 1"},
		{"serve missing config", []string{"serve", "-config", filepath.Join(dir, "nope.yaml")}, 2, "no such file"},
		{"kvbytes directory", []string{"kvbytes", "-model-config", dir, "-seq-len", "8192"}, 2, "is a directory"},
		{"kvbytes missing seq-len", []string{"kvbytes", "-model-config", dir}, 2, "-seq-len is required"},
		{"inspect no argument", []string{"inspect"}, 2, "missing argument FILE|URL"},
		{"inspect refused", []string{"inspect", refused}, 1, "connection refused"},
		{"top bad url", []string{"top", "-url", "ftp://x"}, 2, "-url ftp://x"},
		{"top refused", []string{"top", "-once", "-url", strings.TrimSuffix(strings.TrimPrefix(refused, "http://"), "/metrics")}, 1, "connection refused"},
		{"gen compose exists", []string{"gen", "compose", "-out", "../../deploy", "-src", "../.."}, 2, "exists: pass -force"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := runCmd(c.args...)
			if code != c.code || !strings.Contains(errs, c.msg) || strings.Count(errs, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", code, errs, c.code, c.msg)
			}
			if strings.Contains(errs, `Get "`) {
				t.Errorf("the URL is said twice: %q", errs)
			}
		})
	}
}

// TestTopURLWithoutScheme: -url host:port, as serve prints its -listen,
// reaches the API.
func TestTopURLWithoutScheme(t *testing.T) {
	snap, err := os.ReadFile(filepath.Join("testdata", "top", "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/snapshot":
			w.Write(snap)
		case "/api/v1/series":
			w.Write([]byte(`{"points": []}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	code, out, errs := runCmd("top", "-once", "-width", "80", "-url", strings.TrimPrefix(srv.URL, "http://"))
	if code != 0 || !strings.Contains(out, "VERDICT") {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
	for l := range strings.Lines(out) {
		if n := len([]rune(strings.TrimSuffix(l, "\n"))); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
}

// TestVersionHelp: the version command does not offer -version, which
// would print what it prints; it still takes it, as every command does.
func TestVersionHelp(t *testing.T) {
	code, out, _ := runCmd("version", "-h")
	if code != 0 || strings.Contains(out, "-version") || !strings.Contains(out, "flags:\n  none\n") {
		t.Errorf("version -h: exit %d:\n%s", code, out)
	}
}

// TestListenTaken: a listen address already in use is a usage error, exit
// 2 with one line, from serve and from demo alike.
func TestListenTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	cfg := filepath.Join(t.TempDir(), "ptdmon.yaml")
	os.WriteFile(cfg, []byte("kv_bytes_per_request: 4096\ntargets:\n  - {name: p0, url: \"http://127.0.0.1:1/metrics\", role: prefill, engine: vllm}\n"), 0o644)
	for _, args := range [][]string{
		{"serve", "-config", cfg, "-listen", addr},
		{"demo", "-listen", addr, "-duration", "5s"},
	} {
		code, _, errs := runCmd(args...)
		if code != 2 || !strings.Contains(errs, addr) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s on a taken %s: exit %d, stderr %q; want 2 and one line naming it", args[0], addr, code, errs)
		}
	}
}
