package kubesd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
	"github.com/ptdmon/ptdmon/internal/service"
	"github.com/ptdmon/ptdmon/internal/sim"
)

// instance is what the snapshot says of one target.
type instance struct {
	Target     string    `json:"target"`
	Role       string    `json:"role"`
	Up         bool      `json:"up"`
	Window     *float64  `json:"requests_per_second_window"`
	WindowFrom time.Time `json:"window_from"`
	WindowTo   time.Time `json:"window_to"`
}

// TestRatesThroughRollout runs serve with kubernetes_sd against a fake API
// server whose pods' addresses are the simulator's engines, labelled as
// llm-d labels them. Every pod's windowed completion rate agrees with the
// simulator's truth; then a rollout replaces every pod with a new one (its
// successor serves the same engine), and afterwards the targets are
// exactly the new pods (the old ones are dropped, not down) and every rate,
// and so each stage's sum, agrees with the truth again.
func TestRatesThroughRollout(t *testing.T) {
	sc, err := sim.LoadScenario("balanced")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cl, err := sim.Start(ctx, sc, sim.Options{Seed: 3, Speed: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })

	// One pod per simulated engine; engineOf maps a pod to its engine.
	engineOf := map[string]string{}
	podFor := func(engine, name string, ready bool) pod {
		for _, tg := range cl.Targets() {
			if tg.Name != engine {
				continue
			}
			u, err := url.Parse(tg.URL)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.Atoi(u.Port())
			engineOf[name] = engine
			return pod{name: name, ip: u.Hostname(), ready: ready, ports: []apiPort{port("metrics", int32(n))},
				annotations: map[string]string{"prometheus.io/path": u.Path},
				labels:      map[string]string{"llm-d.ai/role": string(tg.Role), "llm-d.ai/model": "llama"}}
		}
		t.Fatalf("no engine %s", engine)
		return pod{}
	}
	var engines, first []string
	var pods []pod
	for _, tg := range cl.Targets() {
		engines = append(engines, tg.Name)
		name := "v1-" + tg.Name
		first = append(first, name)
		pods = append(pods, podFor(tg.Name, name, true))
	}
	sd := &config.KubernetesSD{Namespaces: []string{"serving"}}
	w := startWatch(t, sd, []string{"serving"}) // only for its fake clientset and helpers
	for _, p := range pods {
		w.create(t, p)
	}
	cfg := &config.Config{
		Listen:   "127.0.0.1:0",
		Interval: config.Duration{Duration: 200 * time.Millisecond},
		Window:   config.Duration{Duration: time.Second},
		// kubernetes_sd as serve reads it; the discovery below is its Watch.
		KubernetesSD: sd,
	}
	cfg.SetDefaults()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- service.Run(ctx, cfg, service.Options{
			KVRequest: kvsize.Request{Bytes: cl.BytesPerRequest(), Basis: "simulator"},
			Logger:    slog.New(slog.DiscardHandler),
			Ready:     func(addr string) { ready <- addr },
			Discover: func(ctx context.Context, update func([]config.Target)) {
				Watch(ctx, sd, w.client, []string{"serving"}, update, slog.New(slog.DiscardHandler))
			},
		})
	}()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	check := func(names []string, after time.Time) {
		t.Helper()
		want := append([]string(nil), names...)
		sort.Strings(want)
		var ins []instance
		deadline := time.Now().Add(20 * time.Second)
		for {
			ins = snapshot(t, base)
			var got []string
			full := 0
			for _, in := range ins {
				got = append(got, in.Target)
				if in.Window != nil && in.WindowFrom.After(after) && in.WindowTo.Sub(in.WindowFrom) >= 700*time.Millisecond {
					full++
				}
			}
			sort.Strings(got)
			if strings.Join(got, " ") == strings.Join(want, " ") && full == len(want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("targets %v (%d with a full window since %v), want %v", got, full, after.Format(time.StampMilli), want)
			}
			time.Sleep(100 * time.Millisecond)
		}
		var obs, truth [2]float64
		for _, in := range ins {
			from, to := truthOf(cl.TruthAt(in.WindowFrom), engineOf[in.Target]), truthOf(cl.TruthAt(in.WindowTo), engineOf[in.Target])
			stage, done := 0, func(c sim.Counts) float64 { return float64(c.PrefillCompleted) }
			if in.Role == "decode" {
				stage, done = 1, func(c sim.Counts) float64 { return float64(c.DecodeCompleted) }
			}
			dt := in.WindowTo.Sub(in.WindowFrom).Seconds()
			want := (done(to.Counts) - done(from.Counts)) / dt
			// A stamp is the midpoint of its exchange: what completed
			// within half the timeout of a window's edge may fall on
			// either side of it.
			const near = 100 * time.Millisecond
			edge := 0.0
			for _, at := range []time.Time{in.WindowFrom, in.WindowTo} {
				a, b := truthOf(cl.TruthAt(at.Add(-near)), engineOf[in.Target]), truthOf(cl.TruthAt(at.Add(near)), engineOf[in.Target])
				edge += done(b.Counts) - done(a.Counts)
			}
			if tol := max(1, edge) / dt; math.Abs(*in.Window-want) > 0.01*want+tol {
				t.Errorf("%s (%s): %.3f req/s, truth %.3f over %.2f s", in.Target, engineOf[in.Target], *in.Window, want, dt)
			}
			obs[stage] += *in.Window
			truth[stage] += want
		}
		for i, stage := range []string{"prefill", "decode"} {
			if truth[i] == 0 {
				t.Errorf("%s: no completions in the window", stage)
			}
			t.Logf("%s: ptdmon %.3f req/s, truth %.3f", stage, obs[i], truth[i])
		}
	}
	t0 := time.Now()
	check(first, cl.Started())
	t.Logf("first check after %v", time.Since(t0))

	// The rollout: each new pod comes up Ready beside the old one, which
	// turns un-Ready and is deleted.
	var second []string
	for _, e := range engines {
		name := "v2-" + e
		second = append(second, name)
		w.create(t, podFor(e, name, true))
		old := podFor(e, "v1-"+e, false)
		w.update(t, old)
		w.remove(t, "serving", old.name)
	}
	t1 := time.Now()
	check(second, t1)
	t.Logf("second check after %v", time.Since(t1))
}

func snapshot(t *testing.T, base string) []instance {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/snapshot")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("snapshot: %v %s", err, resp.Status)
	}
	var snap struct {
		Point struct {
			Instances []instance `json:"instances"`
		} `json:"point"`
	}
	if err := json.Unmarshal(body, &snap); err != nil {
		t.Fatal(fmt.Errorf("snapshot: %w", err))
	}
	return snap.Point.Instances
}

func truthOf(tr sim.Truth, name string) sim.InstanceTruth {
	for _, in := range tr.Instances {
		if in.Name == name {
			return in
		}
	}
	return sim.InstanceTruth{}
}
