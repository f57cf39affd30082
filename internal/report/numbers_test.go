package report

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// leaves walks decoded JSON and returns every number by its dotted key
// (list indices as numbers): the oracle the renderings are held to,
// walked apart from the renderers' own.
func leaves(v any, path string, out map[string]float64) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			leaves(e, join(k), out)
		}
	case []any:
		for i, e := range x {
			leaves(e, join(strconv.Itoa(i)), out)
		}
	case float64:
		out[path] = x
	}
}

// Every number of the JSON report, but the charts' series, is in the
// Markdown and the HTML, each under its key with its value; and the KV
// advice and the KV interval are in the sections a reader reads.
func TestEveryNumberInEveryFormat(t *testing.T) {
	r := simReport(t, "kv-bound", 3, nil)
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	leaves(doc, "", want)
	for k := range want {
		if strings.HasPrefix(k, "series.") {
			delete(want, k)
		}
	}
	if len(want) < 100 {
		t.Fatalf("only %d numbers in the JSON", len(want))
	}
	md := string(r.Markdown())
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	mdRow := regexp.MustCompile(`(?m)^\| ([^ |]+) \| ([^ |]+) \|$`)
	mdGot := map[string]string{}
	for _, m := range mdRow.FindAllStringSubmatch(md, -1) {
		mdGot[m[1]] = m[2]
	}
	attr := regexp.MustCompile(`data-key="([^"]+)" data-value="([^"]*)"`)
	htmlGot := map[string][]string{}
	for _, m := range attr.FindAllStringSubmatch(string(page), -1) {
		k := html.UnescapeString(m[1])
		htmlGot[k] = append(htmlGot[k], html.UnescapeString(m[2]))
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	same := func(text string, w float64) bool {
		v, err := strconv.ParseFloat(text, 64)
		return err == nil && (v == w || fmt.Sprint(v) == fmt.Sprint(w))
	}
	for _, k := range keys {
		w := want[k]
		if !same(mdGot[k], w) {
			t.Errorf("Markdown: %s is %q, JSON %v", k, mdGot[k], w)
		}
		ok := false
		for _, v := range htmlGot[k] {
			ok = ok || same(v, w)
		}
		if !ok {
			t.Errorf("HTML: %s is %q, JSON %v", k, htmlGot[k], w)
		}
	}
	if r.Advice == nil || !r.Advice.KV.Links.OK() {
		t.Fatalf("the kv-bound run's advice has no KV links: %+v", r.Advice)
	}
	kvLinks := numN(r.Advice.KV.Links) + " links"
	if !strings.Contains(md, kvLinks) {
		t.Errorf("the Markdown's advice leaves out the KV links (%s)", kvLinks)
	}
	if !regexp.MustCompile(`id="kv-advice">KV link: [^<]*` + regexp.QuoteMeta(kvLinks)).Match(page) {
		t.Errorf("the HTML's advice leaves out the KV links (%s)", kvLinks)
	}
	// The learned link bandwidth, in bytes/s, beside the KV capacity.
	links := 0
	for _, c := range r.Capacities {
		if c.Bytes.OK() {
			links++
			bw := bytesRate(ptr(c.Bytes.V)) + " per link"
			if !strings.Contains(md, bw) || !strings.Contains(string(page), bw) {
				t.Errorf("the capacity tables leave out the learned link bandwidth %q", bw)
			}
		}
	}
	if links == 0 {
		t.Error("the kv-bound run learned no link bandwidth")
	}
	if r.KV.BytesCI95 == nil || !strings.Contains(string(page), `95% CI [<span data-key="kv.bytes_per_second_ci95.0"`) {
		t.Errorf("the HTML's KV section leaves out the KV interval %v", r.KV.BytesCI95)
	}
}
