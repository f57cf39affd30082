package web_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestVerdictExamplesInChromium runs the decode-bound demo with one traced
// request whose decode is by far the longest phase of any: once the
// verdict names decode, its evidence links to that request, and the link
// opens its waterfall. Its E2E, over the 60 s SLO, is marked in the
// request table and blamed on its decode.
func TestVerdictExamplesInChromium(t *testing.T) {
	t.Parallel() // a demo process of its own, waited on (demoTests)
	testutil.NeedChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	otlpAddr := ln.Addr().String()
	ln.Close()
	base := run(t, ctx, "ptdmon demo: open ", buildPtdmon(t, ctx), "demo", "-scenario", "decode-bound", "-seed", "1",
		"-listen", "127.0.0.1:0", "-otlp.listen", otlpAddr, "-slo-e2e", "60")
	testutil.Eventually(t, 10*time.Second, 100*time.Millisecond, func() (bool, string) {
		c, err := net.Dial("tcp", otlpAddr)
		if err == nil {
			c.Close()
		}
		return err == nil, fmt.Sprintf("OTLP port: %v", err)
	})
	postRequest(t, otlpAddr, "long", time.Now().Add(-time.Minute), 0.02, 0.08, 3600)

	b := startBrowser(t, ctx)
	must(t, chromedp.Do(b.ctx, chromedp.Navigate(base+"/")))
	testutil.Eventually(t, 100*time.Second, 500*time.Millisecond, func() (bool, string) {
		stage := b.eval(t, `document.getElementById("verdict").dataset.stage || ""`)
		first := b.eval(t, `(document.querySelector("#verdict-examples a") || {dataset: {}}).dataset.id || ""`)
		return stage == "decode" && first == "long", fmt.Sprintf("verdict %q, first example %q", stage, first)
	})
	b.eval(t, `(() => { document.querySelector("#verdict-examples a").click(); return ""; })()`)
	testutil.Eventually(t, 10*time.Second, 200*time.Millisecond, func() (bool, string) {
		id := b.eval(t, `document.getElementById("waterfall").dataset.id || ""`)
		return id == "long", fmt.Sprintf("waterfall of %q", id)
	})
	testutil.Eventually(t, 10*time.Second, 200*time.Millisecond, func() (bool, string) {
		blame := b.eval(t, `(() => { const td = document.querySelector('#requests-table tr[data-id="long"] td.missed'); return td ? td.dataset.blame : "-"; })()`)
		return blame == "decode", fmt.Sprintf("long's missed E2E blamed on %q", blame)
	})
	if errs := b.exceptions(); len(errs) > 0 {
		t.Errorf("uncaught exceptions in the page: %q", errs)
	}
}
