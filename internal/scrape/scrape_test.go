package scrape

import (
	"compress/gzip"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestFetchGzipAndMidpoint(t *testing.T) {
	const body = "vllm:num_requests_running 1\n"
	var gotAccept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAccept = r.Header.Get("Accept")
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Error("client does not offer gzip")
		}
		time.Sleep(100 * time.Millisecond)
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		zw := gzip.NewWriter(w)
		zw.Write([]byte(body))
		zw.Close()
	}))
	defer srv.Close()
	f := &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: time.Second}
	before := time.Now()
	res, err := f.Fetch(context.Background())
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != body || res.ContentType != "text/plain; version=0.0.4" {
		t.Errorf("body %q, content type %q", res.Body, res.ContentType)
	}
	if !strings.HasPrefix(gotAccept, "text/plain;version=0.0.4") || !strings.Contains(gotAccept, "openmetrics") {
		t.Errorf("Accept = %q", gotAccept)
	}
	// The sample time is the midpoint: at least ~50 ms after the request
	// started and before the response ended.
	if res.Time.Sub(before) < 45*time.Millisecond || !res.Time.Before(after) || res.Duration < 100*time.Millisecond {
		t.Errorf("time %v after start, duration %v", res.Time.Sub(before), res.Duration)
	}
}

func TestFetchFailures(t *testing.T) {
	f := func(h http.HandlerFunc, timeout time.Duration, limit int64, reason Reason) {
		t.Helper()
		srv := httptest.NewServer(h)
		defer srv.Close()
		fe := &Fetcher{URL: srv.URL, Client: NewClient(1), Timeout: timeout, MaxBodyBytes: limit}
		_, err := fe.Fetch(context.Background())
		var se *Error
		if !errors.As(err, &se) || se.Reason != reason {
			t.Errorf("error %v, want reason %s", err, reason)
		}
	}
	f(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusServiceUnavailable) }, time.Second, 0, ReasonHTTP)
	f(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	}, 100*time.Millisecond, 0, ReasonTimeout)
	f(func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 4096)) }, time.Second, 1024, ReasonTooLarge)
	// A body cut short by the server closing the connection.
	f(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("partial"))
		if hj, ok := w.(http.Hijacker); ok {
			c, _, _ := hj.Hijack()
			c.Close()
		}
	}, time.Second, 0, ReasonRead)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	fe := &Fetcher{URL: "http://" + addr + "/metrics", Client: NewClient(1), Timeout: time.Second}
	_, err = fe.Fetch(context.Background())
	var se *Error
	if !errors.As(err, &se) || se.Reason != ReasonRefused {
		t.Errorf("closed port: %v, want %s", err, ReasonRefused)
	}
}
