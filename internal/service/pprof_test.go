package service

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
)

// Go's profiles are served only when asked for.
func TestPprofIsOptIn(t *testing.T) {
	f := func(name string, on bool, want int) {
		t.Run(name, func(t *testing.T) { pprofServed(t, on, want) })
	}
	f("off by default", false, http.StatusNotFound)
	f("on with -debug.pprof", true, http.StatusOK)
}

func pprofServed(t *testing.T, on bool, want int) {
	cfg := &config.Config{Listen: "127.0.0.1:0"}
	cfg.Targets = append(cfg.Targets, config.TargetFlag("prefill", "p0=http://127.0.0.1:1/metrics"))
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- Run(ctx, cfg, Options{Pprof: on, Ready: func(a string) { ready <- a }}) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("service did not stop in 10 s")
		}
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("service did not start in 10 s")
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("pprof %v: GET %s: %d, want %d", on, path, resp.StatusCode, want)
		}
	}
}
