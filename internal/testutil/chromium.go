package testutil

import (
	"os"
	"testing"
)

// Chromium is the headless browser the page tests drive (Debian package
// chromium).
const Chromium = "/usr/bin/chromium"

// NeedChromium skips t when Chromium is not installed, unless CI is set
// (CI runs the browser tests, so there its absence fails t), and under
// -short.
func NeedChromium(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("%s not installed (apt-get install chromium); CI runs this test", Chromium)
		}
		t.Fatalf("CI is set but %s is missing: %v", Chromium, err)
	}
	if testing.Short() {
		t.Skip("-short")
	}
}
