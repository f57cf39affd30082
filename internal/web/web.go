// Package web serves the dashboard: the page at / and its assets under /ui/,
// embedded in the binary so that it works offline. The page's own sources
// (HTML, CSS and plain JS modules, no build step) are the files in assets/;
// assets/vendor holds a checked-in copy of the pinned uPlot, which
// `npm run build` in web/ copies from npm (docs/web.md#building-the-front-end),
// so `go build` never needs npm.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed assets
var assets embed.FS

// Assets are the embedded files, rooted at the assets directory.
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the directory is embedded: cannot happen
	}
	return sub
}

// asset is one file ready to serve: its bytes, their gzip form when that is
// smaller, and an ETag.
type asset struct {
	body, gz []byte
	ctype    string
	etag     string
}

var (
	loadOnce sync.Once
	files    map[string]*asset
	loadErr  error
)

func load() (map[string]*asset, error) {
	loadOnce.Do(func() {
		files = map[string]*asset{}
		loadErr = fs.WalkDir(Assets(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(Assets(), p)
			if err != nil {
				return fmt.Errorf("read embedded %s: %w", p, err)
			}
			sum := sha256.Sum256(b)
			a := &asset{body: b, ctype: contentType(p), etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
			var z bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
			_, _ = zw.Write(b) // into a bytes.Buffer: no write fails
			zw.Close()
			if z.Len() < len(b)*9/10 {
				a.gz = z.Bytes()
			}
			files[p] = a
			return nil
		})
	})
	return files, loadErr
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".LICENSE":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(p)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Routes returns the page and asset routes to mount beside the API
// (service.Options.Extra).
func Routes() map[string]http.Handler {
	return map[string]http.Handler{
		"GET /{$}": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r, "index.html") }),
		"GET /ui/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, strings.TrimPrefix(r.URL.Path, "/ui/"))
		}),
	}
}

func serve(w http.ResponseWriter, r *http.Request, name string) {
	fs, err := load()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	a, ok := fs[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	// Revalidate every time: the ETag makes that a 304, and a new binary's
	// page never runs with the old binary's modules.
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}
