package expo

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
)

// A label value past 16 MiB makes Prometheus' label encoding panic; the
// parser must refuse the series before any label is built.
func TestHugeLabelValueIsAnErrorNotAPanic(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`vllm:num_requests_running{model_name="`)
	b.Write(bytes.Repeat([]byte("A"), 1<<24+1))
	b.WriteString("\"} 1\n")
	var p Parser
	var l labels.Labels
	visited := 0
	err := p.Parse(b.Bytes(), "text/plain", func(*Sample) error {
		visited++
		p.Labels(&l) // what a reader does for a series it has not seen
		return nil
	})
	if err == nil || visited != 0 {
		t.Fatalf("err %v after %d samples; want an error before the sample", err, visited)
	}
	if len(err.Error()) > 300 {
		t.Errorf("error text of %d bytes carries the body", len(err.Error()))
	}
}

func TestDuplicateSeries(t *testing.T) {
	f := func(body string, wantDup bool) {
		t.Helper()
		var p Parser
		err := p.Parse([]byte(body), "text/plain", func(*Sample) error { return nil })
		if got := errors.Is(err, ErrDuplicate); got != wantDup {
			t.Errorf("%q: err %v, duplicate %v want %v", body, err, got, wantDup)
		}
	}
	f("a_total{x=\"1\"} 10\na_total{x=\"1\"} 993\n", true)
	f("a_total{x=\"1\"} 10\na_total{x=\"2\"} 993\n", false)
	// The same value twice is harmless, as in Prometheus.
	f("a_total{x=\"1\"} 10\na_total{x=\"1\"} 10\n", false)
	// A parser is reused from scrape to scrape: no memory across bodies.
	var p Parser
	for range 3 {
		if err := p.Parse([]byte("a 1\n"), "", func(*Sample) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
}

// A target that serves another service's page must not have the page shown.
func TestParseErrorsDoNotQuoteTheBody(t *testing.T) {
	for _, body := range []string{
		"SECRET_TOKEN=hunter2-abcdef\n",
		"# TYPE x gauge\nx{a=\"1\"} SECRET_TOKEN=hunter2-abcdef\n",
		"x{SECRET_TOKEN=\"hunter2-abcdef\" 1\n",
	} {
		for _, ct := range []string{"text/plain", "application/openmetrics-text; version=1.0.0"} {
			var p Parser
			err := p.Parse([]byte(body), ct, func(*Sample) error { return nil })
			if err == nil {
				t.Fatalf("%q parsed", body)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: error quotes the body: %v", ct, err)
			}
		}
	}
}
