package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	i := Get()
	if i.Version == "" || i.Revision == "" {
		t.Fatalf("empty fields: %+v", i)
	}
	if i.GoVersion != runtime.Version() {
		t.Errorf("GoVersion %q, want %q", i.GoVersion, runtime.Version())
	}
	if ua := UserAgent(); !strings.HasPrefix(ua, "ptdmon/") || strings.ContainsAny(ua, " \n") && !strings.Contains(ua, "(devel)") {
		t.Errorf("UserAgent %q", ua)
	}
}
