package web_test

// A minimal Chrome DevTools Protocol client over a hand-rolled websocket
// (RFC 6455, client side only): enough to drive headless Chromium without a
// Go dependency.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

type cdp struct {
	conn net.Conn
	br   *bufio.Reader
	wmu  sync.Mutex
	next int

	mu      sync.Mutex
	waiting map[int]chan cdpReply
	events  chan cdpEvent
	err     error
}

type cdpReply struct {
	Result json.RawMessage
	Err    *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

type cdpEvent struct {
	Method string
	Params json.RawMessage
}

func dialCDP(ctx context.Context, wsURL string) (*cdp, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, fmt.Errorf("devtools url %q: %w", wsURL, err)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("dial devtools: %w", err)
	}
	key := make([]byte, 16)
	rand.Read(key)
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		u.RequestURI(), u.Host, base64.StdEncoding.EncodeToString(key))
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	br := bufio.NewReaderSize(conn, 1<<16)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %s", resp.Status)
	}
	c := &cdp{conn: conn, br: br, waiting: map[int]chan cdpReply{}, events: make(chan cdpEvent, 4096)}
	go c.readLoop()
	return c, nil
}

func (c *cdp) Close() { c.conn.Close() }

// readFrame returns one whole message, joining fragments.
func (c *cdp) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.br, h[:]); err != nil {
			return nil, err
		}
		fin, op := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c.br, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(c.br, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		if h[1]&0x80 != 0 {
			return nil, errors.New("masked frame from server")
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.br, payload); err != nil {
			return nil, err
		}
		switch op {
		case 0x8:
			return nil, io.EOF
		case 0x9, 0xA: // ping/pong: Chromium does not send them unasked
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}

func (c *cdp) readLoop() {
	for {
		b, err := c.readMessage()
		if err != nil {
			c.mu.Lock()
			c.err = err
			for _, ch := range c.waiting {
				close(ch)
			}
			c.waiting = map[int]chan cdpReply{}
			c.mu.Unlock()
			close(c.events)
			return
		}
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		if m.ID != 0 {
			c.mu.Lock()
			ch := c.waiting[m.ID]
			delete(c.waiting, m.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- cdpReply{Result: m.Result, Err: m.Error}
			}
			continue
		}
		select {
		case c.events <- cdpEvent{m.Method, m.Params}:
		default: // a slow test loses events rather than blocking replies
		}
	}
}

func (c *cdp) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	hdr := []byte{0x81}
	switch n := len(b); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	var mask [4]byte
	rand.Read(mask[:])
	hdr = append(hdr, mask[:]...)
	out := make([]byte, len(b))
	for i := range b {
		out[i] = b[i] ^ mask[i%4]
	}
	_, err := c.conn.Write(append(hdr, out...))
	return err
}

// call sends one command and decodes its result into out (if not nil).
func (c *cdp) call(ctx context.Context, method string, params any, out any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: connection closed: %w", method, c.err)
	}
	c.next++
	id := c.next
	ch := make(chan cdpReply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	if params == nil {
		params = struct{}{}
	}
	b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	if err := c.write(b); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: connection closed", method)
		}
		if r.Err != nil {
			return fmt.Errorf("%s: %s", method, r.Err.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	}
}

// eval runs a JS expression in the page and decodes its JSON-able value.
func (c *cdp) eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	err := c.call(ctx, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("evaluate %q: %s", expr, r.Exception.Text)
	}
	return json.Unmarshal(r.Result.Value, out)
}

// devtoolsURL reads "DevTools listening on ws://..." from Chromium's stderr.
func devtoolsURL(r io.Reader, timeout time.Duration) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if _, after, ok := strings.Cut(sc.Text(), "DevTools listening on "); ok {
				found <- strings.TrimSpace(after)
				break
			}
		}
		io.Copy(io.Discard, r)
	}()
	select {
	case u := <-found:
		return u, nil
	case <-time.After(timeout):
		return "", errors.New("chromium did not print its DevTools address")
	}
}
