package scrape

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func fetchReason(t *testing.T, f *Fetcher) (Result, Reason, error) {
	t.Helper()
	res, err := f.Fetch(context.Background())
	if err == nil {
		return res, "", nil
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *scrape.Error", err)
	}
	return res, se.Reason, err
}

func TestRedirects(t *testing.T) {
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("SECRET_TOKEN=hunter2\n"))
	}))
	defer secret.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("up 1\n")) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, secret.URL+"/", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop2", http.StatusFound) })
	mux.HandleFunc("/loop2", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	n := 0
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		n++
		http.Redirect(w, r, "/endless?"+strings.Repeat("x", n), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	f := func(path string, follow bool, want Reason, wantBody string) {
		t.Helper()
		fe := &Fetcher{URL: srv.URL + path, Client: NewClientFollowing(1, follow), Timeout: 2 * time.Second}
		res, reason, err := fetchReason(t, fe)
		if reason != want {
			t.Errorf("%s (follow %v): reason %q (%v), want %q", path, follow, reason, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error carries the other page: %v", path, err)
		}
		if err == nil && string(res.Body) != wantBody {
			t.Errorf("%s: body %q, want %q", path, res.Body, wantBody)
		}
	}
	f("/metrics", false, "", "up 1\n") // the trailing-slash redirect of a ServeMux subtree
	f("/away", false, ReasonRedirect, "")
	f("/away", true, "", "SECRET_TOKEN=hunter2\n")
	f("/loop", false, ReasonRedirectLoop, "")
	f("/loop", true, ReasonRedirectLoop, "")
	f("/endless", false, ReasonRedirectLoop, "")
}

func TestErrorsNeitherQuoteBodiesNorShowPasswords(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "SECRET_TOKEN=hunter2", http.StatusForbidden)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://admin:pa55word@", 1) + "/metrics"
	_, reason, err := fetchReason(t, &Fetcher{URL: u, Client: NewClient(1), Timeout: time.Second})
	if reason != ReasonHTTP || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "pa55word") {
		t.Errorf("reason %s, error %q", reason, err)
	}
	// A transport error (refused) names the URL too.
	srv.Close()
	_, reason, err = fetchReason(t, &Fetcher{URL: u, Client: NewClient(1), Timeout: time.Second})
	if reason != ReasonRefused || strings.Contains(err.Error(), "pa55word") || !strings.Contains(err.Error(), "admin:xxxxx@") {
		t.Errorf("reason %s, error %q", reason, err)
	}
	if got := Redact("http://u:p@h:1/m"); got != "http://u:xxxxx@h:1/m" {
		t.Errorf("Redact = %q", got)
	}
	if got := Redact("http://h:1/m?a=b"); got != "http://h:1/m?a=b" {
		t.Errorf("Redact = %q", got)
	}
}

// endless streams a chunked body until the client goes away.
func endless(w http.ResponseWriter, r *http.Request) {
	chunk := bytes.Repeat([]byte("vllm:x 1\n"), 8<<10)
	for {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// An endless body stops at the limit without the buffer growing past it,
// and bodies in flight together never exceed the budget.
func TestEndlessBodiesAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(endless))
	defer srv.Close()
	const limit = 3<<20 + 12345
	fe := &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: 5 * time.Second, MaxBodyBytes: limit}
	_, reason, _ := fetchReason(t, fe)
	if reason != ReasonTooLarge {
		t.Fatalf("reason %q, want %s", reason, ReasonTooLarge)
	}

	var grew int
	rec := &body{}
	r := io.LimitReader(infinite{}, 100<<20)
	if _, err := rec.readFrom(r, limit, -1); !errors.Is(err, errTooLarge) {
		t.Fatalf("readFrom: %v", err)
	}
	if grew = cap(rec.buf); grew > limit {
		t.Errorf("buffer grew to %d bytes for a %d-byte limit", grew, limit)
	}

	// Large buffers in use and kept for reuse share a 6 MiB budget: a
	// 4 MiB body holds 4 MiB of it (and its 2 MiB step is kept), so a
	// second one fails on the budget; after the release a third reuses
	// the kept buffers and the budget is never exceeded.
	budget := NewBudget(6 << 20)
	one, two := &body{budget: budget}, &body{budget: budget}
	if _, err := one.readFrom(io.LimitReader(infinite{}, 4<<20), 4<<20, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := two.readFrom(io.LimitReader(infinite{}, 4<<20), 4<<20, -1); !errors.Is(err, errBudget) {
		t.Fatalf("second body: %v, want the budget error", err)
	}
	if u := budget.Used(); u > 6<<20 {
		t.Errorf("%d bytes drawn from a %d-byte budget", u, 6<<20)
	}
	one.release()
	two.release()
	three := &body{budget: budget}
	if n, err := three.readFrom(io.LimitReader(infinite{}, 4<<20), 4<<20, -1); err != nil || n != 4<<20 {
		t.Errorf("third body: %d bytes, %v", n, err)
	}
	if u := budget.Used(); u > 6<<20 {
		t.Errorf("%d bytes drawn from a %d-byte budget", u, 6<<20)
	}
	three.release()
	// A body of exactly the limit is whole; one byte more is too large.
	for _, extra := range []int64{0, 1} {
		b := &body{}
		_, err := b.readFrom(io.LimitReader(infinite{}, 3<<20+extra), 3<<20, -1)
		if (err == nil) != (extra == 0) || cap(b.buf) > 3<<20 {
			t.Errorf("limit+%d: %v, buffer %d", extra, err, cap(b.buf))
		}
	}
}

type infinite struct{}

func (infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// A small body keeps working while others exhaust the budget.
func TestSmallBodyIgnoresAnExhaustedBudget(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("a 1\n"), 100_000))
	}))
	defer srv.Close()
	budget := NewBudget(1)
	fe := &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: time.Second, Budget: budget}
	for range 3 {
		res, reason, err := fetchReason(t, fe)
		if err != nil || len(res.Body) != 400_000 {
			t.Fatalf("reason %s, err %v, %d bytes", reason, err, len(res.Body))
		}
	}
}

func BenchmarkFetch(b *testing.B) {
	body := bytes.Repeat([]byte("vllm:num_requests_running{model_name=\"m\"} 1\n"), 20_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	fe := &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: time.Second, Budget: NewBudget(DefaultBodyBudget)}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := fe.Fetch(context.Background()); err != nil {
			b.Fatal(err)
		}
		fe.Release()
	}
}

// A body that claims gzip and is not is a broken body, not a connection
// failure.
func TestInvalidGzipIsARead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("vllm:num_requests_running 1\n"))
	}))
	defer srv.Close()
	_, reason, err := fetchReason(t, &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: time.Second})
	if reason != ReasonRead {
		t.Errorf("reason %q (%v), want %s", reason, err, ReasonRead)
	}
}
