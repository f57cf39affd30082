package service

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/config"
	"github.com/ptdmon/ptdmon/internal/kvsize"
)

// TestHostileTargets runs the collector over loopback against targets that
// send what no engine should — endless bodies, a gzip bomb, a slowloris,
// NUL bytes, +Inf and NaN, wrong content types (JSON, HTML, text sent as
// OpenMetrics), duplicate series, a huge label, label churn, redirects to
// another service and in a loop, an error page with a secret — next to a
// good decode target whose rate must stay right. Nothing may crash, leak
// another service's page or a password, or put NaN on /metrics; every
// failure carries its own reason.
func TestHostileTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 5 s of real time")
	}
	stop := make(chan struct{})
	defer close(stop)
	text := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			w.Write([]byte(body))
		}
	}
	endless := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("vllm:num_requests_running{engine=\"0\"} 1\n"), 4096)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	// A gzip bomb: 64 MiB of zeros in about 64 KiB, as 64 gzip members of
	// 1 MiB each (a gzip reader reads concatenated members as one stream),
	// so that building it does not cost seconds under the race detector.
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	bomb := bytes.NewBuffer(bytes.Repeat(member.Bytes(), 64))
	gzipBomb := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	})
	slowloris := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fl := w.(http.Flusher)
		for i := 0; i < 100; i++ {
			if _, err := w.Write([]byte("v")); err != nil {
				return
			}
			fl.Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			case <-stop:
				return
			}
		}
	})
	nul := serveFunc(t, text("vllm:num_requests_running 1\x00\x00\x00\n"))
	vllmLine := "# TYPE vllm:request_success counter\nvllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} %s\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} %s\n"
	inf := serveFunc(t, text(fmt.Sprintf(vllmLine, "+Inf", "+Inf")))
	nan := serveFunc(t, text(fmt.Sprintf(vllmLine, "NaN", "NaN")+"# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"m\"} 2\n"))
	jsonTyped := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, vllmLine, "1", "1")
	})
	omTyped := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0")
		fmt.Fprintf(w, vllmLine, "1", "1") // text format, no # EOF
	})
	jsonBody := serveFunc(t, text(`{"vllm:num_requests_running": 1, "SECRET_TOKEN": "hunter2"}`))
	html := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>SECRET_TOKEN=hunter2</html>"))
	})
	dup := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		v := time.Now().UnixNano() % 1000
		fmt.Fprintf(w, "# TYPE vllm:request_success counter\nvllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} %d\nvllm:request_success_total{model_name=\"m\",finished_reason=\"stop\"} %d\n", 10+v, 900+v)
	})
	hugeLabel := serveFunc(t, text("vllm:num_requests_running{model_name=\""+strings.Repeat("A", 2<<20)+"\"} 1\n"))
	n := 0
	churn := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		var b strings.Builder
		b.WriteString("# TYPE vllm:prompt_tokens counter\n")
		for i := 0; i < 2000; i++ {
			fmt.Fprintf(&b, "vllm:prompt_tokens_total{model_name=\"m\",request=\"%d-%d\"} 1\n", n, i)
		}
		w.Write([]byte(b.String()))
	})
	secret := serveFunc(t, text("SECRET_TOKEN=hunter2\n"))
	redirectAway := serveFunc(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, secret, http.StatusFound) })
	redirectLoop := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		to := "/a"
		if r.URL.Path == "/a" {
			to = "/metrics"
		}
		http.Redirect(w, r, to, http.StatusFound)
	})
	errorPage := serveFunc(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "SECRET_TOKEN=hunter2", http.StatusInternalServerError)
	})
	good := startFake(t, 5*time.Millisecond, 11, vllmBody("llama", 1, 10, "", 0))
	goodURL := strings.Replace(good.URL(), "http://", "http://admin:pa55word@", 1)

	hostile := map[string]struct {
		url    string
		reason string // "" : up, values absent where non-finite
	}{
		"endless":       {endless, "body_"},
		"gzip-bomb":     {gzipBomb, "body_too_large"},
		"slowloris":     {slowloris, "timeout"},
		"nul":           {nul, "not_exposition"},
		"inf":           {inf, ""},
		"nan":           {nan, ""},
		"json-typed":    {jsonTyped, "not_exposition"},
		"json-body":     {jsonBody, "not_exposition"},
		"om-typed-text": {omTyped, "parse"},
		"html":          {html, "not_exposition"},
		"duplicate":     {dup, "duplicate_series"},
		"huge-label":    {hugeLabel, "parse"},
		"churn":         {churn, ""},
		"redirect-away": {redirectAway, "redirect"},
		"redirect-loop": {redirectLoop, "redirect_loop"},
		"error-page":    {errorPage, "http_status"},
	}
	cfg := &config.Config{
		Interval:        config.Duration{Duration: time.Second},
		Window:          config.Duration{Duration: 4 * time.Second},
		MaxBodyBytes:    4 << 20,
		BodyBudgetBytes: 8 << 20,
		Targets:         []config.Target{{Name: "good", URL: goodURL, Role: "decode"}},
	}
	for name, h := range hostile {
		cfg.Targets = append(cfg.Targets, config.Target{Name: name, URL: h.url, Role: "prefill"})
	}
	rs := startService(t, cfg, kvsize.Request{})

	var (
		raw     string
		targets []targetJSON
		byName  map[string]targetJSON
		snap    struct {
			Point struct {
				Decode    stageJSON `json:"decode"`
				Instances []struct {
					instanceJSON
					Running *float64          `json:"running"`
					Absent  map[string]string `json:"absent"`
				} `json:"instances"`
			} `json:"point"`
		}
	)
	// stateOf says how far target name is from what it should show.
	stateOf := func(name, reason string) string {
		tg := byName[name]
		if reason == "" {
			if !tg.Up {
				return fmt.Sprintf("%s: down (%s), want up", name, tg.LastError)
			}
			return ""
		}
		for r, c := range tg.Failures {
			if c > 0 && strings.HasPrefix(r, reason) && !tg.Up {
				return ""
			}
		}
		return fmt.Sprintf("%s: up=%v failures=%v last_error=%q; want down with reason %s", name, tg.Up, tg.Failures, tg.LastError, reason)
	}
	// Wait until every target shows its state and the good one's window
	// spans most of W.
	eventually(t, 30*time.Second, func() string {
		raw = getText(t, rs.base+"/api/v1/targets")
		targets = nil
		if err := json.Unmarshal([]byte(raw), &targets); err != nil {
			t.Fatalf("/api/v1/targets: %v: %.300s", err, raw)
		}
		byName = map[string]targetJSON{}
		for _, tg := range targets {
			byName[tg.Name] = tg
		}
		for name, h := range hostile {
			if why := stateOf(name, h.reason); why != "" {
				return why
			}
		}
		getJSON(t, rs.base+"/api/v1/snapshot", &snap)
		for _, ip := range snap.Point.Instances {
			if ip.Target == "good" && ip.Window != nil && ip.WindowTo.Sub(ip.WindowFrom) >= cfg.Window.Duration-cfg.Interval.Duration {
				return ""
			}
		}
		return "the good target has no full window yet"
	})

	for _, leak := range []string{"hunter2", "SECRET", "pa55word"} {
		if strings.Contains(raw, leak) {
			t.Errorf("/api/v1/targets leaks %q", leak)
		}
	}
	for name, h := range hostile {
		t.Run(name, func(t *testing.T) {
			if why := stateOf(name, h.reason); why != "" {
				t.Error(why)
			}
		})
	}
	if !byName["good"].Up || len(byName["good"].Failures) > 0 {
		t.Errorf("good target: %+v", byName["good"])
	}

	var goodWindow *float64
	for _, ip := range snap.Point.Instances {
		if (ip.Target == "inf" || ip.Target == "nan") && (ip.Running != nil || ip.Absent["running"] == "") {
			t.Errorf("%s: running %v, absent %v; want absent as not finite", ip.Target, ip.Running, ip.Absent)
		}
		if ip.Target != "good" {
			continue
		}
		// The truth at the samples' own times: the fake's readings nearest
		// the two stamps, 10 req/s between them. Any error left is the
		// ledger's, not the loaded machine's; a hostile neighbour that stole
		// scrapes or memory would show as a missing or short window.
		from, offFrom := good.readNear(ip.WindowFrom)
		to, offTo := good.readNear(ip.WindowTo)
		if offFrom > cfg.Interval.Duration/2 || offTo > cfg.Interval.Duration/2 {
			t.Errorf("good: window stamps %v, %v are %v, %v from any reading", ip.WindowFrom, ip.WindowTo, offFrom, offTo)
		}
		goodWindow = ip.Window
		truth := 10 * (to.elapsed - from.elapsed) / ip.WindowTo.Sub(ip.WindowFrom).Seconds()
		within(t, "good decode req/s (window) among hostile targets, against its readings", ip.Window, truth, 1e-3)
		// And against the nominal rate: a stamp must sit near its reading.
		within(t, "good decode req/s (window) among hostile targets", ip.Window, 10, 0.1)
	}
	// The decode stage is the good target alone: the hostile ones are prefill.
	if goodWindow == nil || snap.Point.Decode.Window == nil || *snap.Point.Decode.Window != *goodWindow {
		t.Errorf("decode stage window %v, the good target's %v; want the same", snap.Point.Decode.Window, goodWindow)
	}
	metrics := getText(t, rs.base+"/metrics")
	if strings.Contains(metrics, "NaN") || strings.Contains(metrics, "} +Inf") {
		t.Errorf("/metrics carries a non-finite value")
	}
	if !strings.Contains(metrics, `ptd_target_up{engine="vllm",role="decode",target="good"} 1`) {
		t.Errorf("/metrics lacks the good target up")
	}
	series := getText(t, rs.base+"/api/v1/series?last=60&format=compact")
	if !json.Valid([]byte(series)) {
		t.Errorf("/api/v1/series is not JSON: %.200s", series)
	}
}
