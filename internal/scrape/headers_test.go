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

	"github.com/ptdmon/ptdmon/internal/buildinfo"
)

// The request carries what Prometheus' scrape requests carry: the scrape
// timeout in seconds, and a User-Agent naming the scraper's version.
func TestFetchHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, "up 1\n")
	}))
	defer srv.Close()
	f := func(timeout time.Duration, want string) {
		t.Helper()
		fe := &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: timeout}
		if _, err := fe.Fetch(context.Background()); err != nil {
			t.Fatal(err)
		}
		fe.Release()
		if v := got.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != want {
			t.Errorf("timeout %v: header %q, want %q", timeout, v, want)
		}
		if ua := got.Get("User-Agent"); ua != buildinfo.UserAgent() || !strings.HasPrefix(ua, "ptdmon/") {
			t.Errorf("User-Agent %q, want %q", ua, buildinfo.UserAgent())
		}
	}
	f(800*time.Millisecond, "0.8")
	f(10*time.Second, "10")
	f(0, "")
}

// A body that announces its length is read into one buffer of that size;
// one that lies about it is still read whole or refused by the limit.
func TestReadFromContentLength(t *testing.T) {
	data := bytes.Repeat([]byte("vllm:x 1\n"), 20000) // 180 KB
	f := func(announced, limit int64, wantErr error, wantCap int) {
		t.Helper()
		var b body
		n, err := b.readFrom(bytes.NewReader(data), limit, announced)
		if !errors.Is(err, wantErr) {
			t.Fatalf("announced %d limit %d: err %v, want %v", announced, limit, err, wantErr)
		}
		if err == nil && (n != len(data) || !bytes.Equal(b.buf, data)) {
			t.Fatalf("announced %d: read %d bytes, want %d", announced, n, len(data))
		}
		if wantCap > 0 && cap(b.buf) != wantCap {
			t.Errorf("announced %d: buffer of %d bytes, want %d", announced, cap(b.buf), wantCap)
		}
		b.release()
	}
	f(int64(len(data)), 1<<20, nil, 192<<10) // the smallest class that holds 180 KB and one byte
	f(-1, 1<<20, nil, 0)
	f(10, 1<<20, nil, 0)    // too small a claim: grows as it reads
	f(1<<40, 1<<20, nil, 0) // an absurd claim is not believed
	f(int64(len(data)), 1000, errTooLarge, 0)
}

// One Fetcher's requests share their header: a change of timeout or URL
// is sent from the next fetch on, and what the client adds to one request
// (a URL's credentials) is not sent with the next.
func TestFetchHeadersFollowTheFetcher(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, "up 1\n")
	}))
	defer srv.Close()
	fe := &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: time.Second}
	f := func(url string, timeout time.Duration, wantTimeout, wantAuth string) {
		t.Helper()
		fe.URL, fe.Timeout = url, timeout
		if _, err := fe.Fetch(context.Background()); err != nil {
			t.Fatal(err)
		}
		fe.Release()
		if v := got.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != wantTimeout {
			t.Errorf("%s, timeout %v: timeout header %q, want %q", url, timeout, v, wantTimeout)
		}
		if v := got.Get("Authorization"); v != wantAuth {
			t.Errorf("%s: Authorization %q, want %q", url, v, wantAuth)
		}
		if got.Get("Accept") != Accept || got.Get("User-Agent") != buildinfo.UserAgent() {
			t.Errorf("%s: Accept %q, User-Agent %q", url, got.Get("Accept"), got.Get("User-Agent"))
		}
	}
	withUser := strings.Replace(srv.URL, "http://", "http://u:p@", 1)
	f(srv.URL, time.Second, "1", "")
	f(srv.URL, time.Second, "1", "")
	f(srv.URL, 2*time.Second, "2", "")
	f(withUser, 2*time.Second, "2", "Basic dTpw")
	f(srv.URL, 2*time.Second, "2", "")
	f(srv.URL, 0, "", "")
}
