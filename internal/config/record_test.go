package config

import (
	"strings"
	"testing"
	"time"
)

func TestRecordSection(t *testing.T) {
	const tg = "targets: [{url: 'http://a:1/m'}]\n"
	f := func(yaml, want string) {
		t.Helper()
		c, err := Parse([]byte(tg+yaml), "ptdmon.yaml")
		if err != nil {
			t.Fatal(err)
		}
		c.SetDefaults()
		err = c.Validate()
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", yaml, err)
			}
			return
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", yaml, err, want)
		}
	}
	f("record: {dir: run1, retention: 48h, max_bytes: 1000000}\n", "")
	f("record: {dir: run1, retention: 0s}\n", "ptdmon.yaml:2: record: retention 0s must be > 0")
	f("record: {dir: run1, max_bytes: -1}\n", "ptdmon.yaml:2: record: max_bytes -1 must be ≥ 0")
	f("record: {retention: 1h}\n", "ptdmon.yaml:2: record: retention and max_bytes need a dir")

	c, err := Parse([]byte(tg+"record: {dir: run1, retention: 2h}\n"), "ptdmon.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Record.Dir != "run1" || c.Record.Retention.Duration != 2*time.Hour {
		t.Errorf("record = %+v", c.Record)
	}
}
