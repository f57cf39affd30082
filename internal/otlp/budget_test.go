package otlp

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ptdmon/ptdmon/internal/testutil"
)

// TestChunkedBodiesCountWhileRead: a body without Content-Length counts
// against max_bytes as it is read, not once it is whole, so exports being
// read at once never hold more than max_bytes between them. One stalled
// chunked upload holding most of the budget leaves another too little.
func TestChunkedBodiesCountWhileRead(t *testing.T) {
	const maxBytes = 1 << 20
	var c counted
	r, addr := serve(t, Config{MaxBytes: maxBytes}, &c)

	// A: 800 KiB sent in one chunk, then nothing.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const held = 800 << 10
	fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", held)
	if _, err := conn.Write(bytes.Repeat([]byte{0}, held)); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(conn, "\r\n")
	testutil.Eventually(t, 5*time.Second, 10*time.Millisecond, func() (bool, string) {
		r.budget.mu.Lock()
		used := r.budget.used
		r.budget.mu.Unlock()
		return used >= held, fmt.Sprintf("the stalled upload holds %d bytes of the budget, want %d", used, held)
	})

	// B: a valid export, chunked, larger than what is left.
	body := protoBody(t, 1)
	big := bytes.Repeat(body, (maxBytes-held)/len(body)+2)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/traces", io.MultiReader(bytes.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctProtobuf)
	req.ContentLength = -1 // chunked
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("an export over what the budget has left: status %d, want 503", resp.StatusCode)
	}
}
