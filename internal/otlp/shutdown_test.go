package otlp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestServeClosesStalledExports: a client that sends the headers of an
// export and then stalls must not hold its connection, and the handler's
// goroutine, once Serve has returned.
func TestServeClosesStalledExports(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var c counted
	r := New(Config{}, c.consume, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, ln) }()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// 100 bytes announced, 10 sent: the handler waits for the rest.
	fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: 100\r\n\r\n0123456789")
	// The handler has reserved the announced body: it is reading it.
	testutil.Eventually(t, 10*time.Second, time.Millisecond, func() (bool, string) {
		r.budget.mu.Lock()
		defer r.budget.mu.Unlock()
		return r.budget.used == 100, fmt.Sprintf("%d bytes reserved, want the announced 100", r.budget.used)
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	// Serve has returned: the connection is closed, not left to the
	// stalled client.
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = conn.Read(make([]byte, 1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the stalled export's connection is still open after Serve returned")
	}
}
