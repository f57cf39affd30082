package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestVendoredUPlotMatchesNodeModules fails when the committed uPlot files
// differ from what `npm ci && npm run build` in web/ produces.
func TestVendoredUPlotMatchesNodeModules(t *testing.T) {
	uplot := filepath.Join("..", "..", "web", "node_modules", "uplot")
	if _, err := os.Stat(uplot); err != nil {
		if why := os.Getenv("PTDMON_NPM_UNAVAILABLE"); why != "" {
			t.Skipf("%s is missing (%s): the vendored uPlot is checked only where npm can install it", uplot, why)
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: run `npm ci` in web/ first (CI must check the vendored uPlot)", uplot)
		}
		t.Skipf("%s is missing: run `npm ci` in web/ to check the vendored uPlot", uplot)
	}
	pkg, err := os.ReadFile(filepath.Join(uplot, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`"version":\s*"1\.6\.32"`).Match(pkg) {
		t.Fatalf("node_modules has another uPlot than the pinned 1.6.32: run `npm ci` in web/")
	}
	for asset, src := range map[string]string{
		"vendor/uPlot.iife.min.js": filepath.Join(uplot, "dist", "uPlot.iife.min.js"),
		"vendor/uPlot.min.css":     filepath.Join(uplot, "dist", "uPlot.min.css"),
		"vendor/uPlot.LICENSE":     filepath.Join(uplot, "LICENSE"),
	} {
		a, err := fs.ReadFile(Assets(), asset)
		if err != nil {
			t.Errorf("%s is not embedded: run `npm run build` in web/", asset)
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("internal/web/assets/%s differs from %s: run `npm run build` in web/ and commit the result", asset, src)
		}
	}
}

// TestLockPinsUPlot keeps the pin honest: package.json and the lock name
// exactly 1.6.32 with its registry integrity.
func TestLockPinsUPlot(t *testing.T) {
	lock, err := os.ReadFile(filepath.Join("..", "..", "web", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`"node_modules/uplot":\s*\{\s*"version":\s*"1\.6\.32",[^}]*"integrity":\s*"sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy\+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw=="`)
	if !re.Match(lock) {
		t.Errorf("web/package-lock.json does not pin uplot 1.6.32 with its integrity")
	}
	pkg, _ := os.ReadFile(filepath.Join("..", "..", "web", "package.json"))
	if !bytes.Contains(pkg, []byte(`"uplot": "1.6.32"`)) {
		t.Errorf("web/package.json must pin uplot to exactly 1.6.32")
	}
}

// TestNoNetworkAtRunTime: the page works offline, so nothing it loads may
// point off the server.
func TestNoNetworkAtRunTime(t *testing.T) {
	ext := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//|import\s[^;]*from\s*["']https?:|fetch\(\s*["'\x60]https?:|EventSource\(\s*["'\x60]https?:`)
	fs.WalkDir(Assets(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, "vendor/") {
			return err
		}
		b, _ := fs.ReadFile(Assets(), p)
		if m := ext.Find(b); m != nil {
			t.Errorf("%s loads from another origin: %q", p, m)
		}
		return nil
	})
}

func TestServe(t *testing.T) {
	mux := http.NewServeMux()
	for pat, h := range Routes() {
		mux.Handle(pat, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(path string, hdr ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	r := get("/")
	body, _ := io.ReadAll(r.Body)
	if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
		!bytes.Contains(body, []byte(`src="/ui/vendor/uPlot.iife.min.js"`)) {
		t.Fatalf("GET /: %s %s\n%.300s", r.Status, r.Header.Get("Content-Type"), body)
	}
	r = get("/ui/app.js", "Accept-Encoding", "gzip")
	if r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || r.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("app.js headers: %v", r.Header)
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := io.ReadAll(zr)
	if !bytes.Contains(js, []byte("EventSource")) {
		t.Errorf("app.js content: %.200s", js)
	}
	if r2 := get("/ui/app.js", "If-None-Match", r.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %s", r2.Status)
	}
	for _, p := range []string{"/ui/vendor/uPlot.iife.min.js", "/ui/vendor/uPlot.min.css", "/ui/vendor/uPlot.LICENSE"} {
		if r := get(p); r.StatusCode != 200 {
			t.Errorf("GET %s: %s", p, r.Status)
		}
	}
	for _, p := range []string{"/ui/nope.js", "/ui/../web.go", "/index.html.bak"} {
		if r := get(p); r.StatusCode == 200 {
			t.Errorf("GET %s: %s, want an error", p, r.Status)
		}
	}
}
