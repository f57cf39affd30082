package gen

import (
	"strings"
	"testing"
)

// TestMonitorRelease: the release label kube-prometheus-stack selects by is
// on the ServiceMonitor, the PodMonitor and the PrometheusRule, with the
// value asked for, and on none of them when none is asked for.
func TestMonitorRelease(t *testing.T) {
	f := func(release string, want int) {
		t.Helper()
		in := exampleInput(t)
		in.Release = release
		files, err := Kubernetes(in, []byte(ExampleConfig))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, name := range []string{"ptdmon.yaml", "engines-podmonitor.yaml", "ptdmon-rules.yaml"} {
			n += strings.Count(string(files[name]), "\n    release: "+release+"\n")
		}
		if release == "" {
			n = 0
			for _, b := range files {
				n += strings.Count(string(b), "release:")
			}
		}
		if n != want {
			t.Errorf("release %q: %d labels, want %d", release, n, want)
		}
	}
	f("prom", 3)
	f(DefaultRelease, 3)
	f("", 0)
}
