package web_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptdmon/ptdmon/internal/web"
)

// pageHash is a digest of the page's embedded sources (HTML, CSS, JS,
// vendored uPlot), names and bytes, in path order.
func pageHash(t testing.TB) string {
	t.Helper()
	h := sha256.New()
	err := fs.WalkDir(web.Assets(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(web.Assets(), p)
		if err != nil {
			return err
		}
		h.Write([]byte(p + "\x00"))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// screenshotsPage is the file that records which page the screenshots in
// docs/screenshots show.
const screenshotsPage = "page.sha256"

// TestScreenshotsShowThisPage: the screenshots of the README and
// docs/web.md were taken of the page as its sources are now. A change to
// the page without new screenshots fails here; `bash scripts/screenshots.sh`
// takes them again and records the page they show.
func TestScreenshotsShowThisPage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "screenshots", screenshotsPage))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), pageHash(t); got != want {
		t.Errorf("docs/screenshots show the page of %s, the page now is %s: run bash scripts/screenshots.sh", got, want)
	}
}
