package fpm

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ptdmon/ptdmon/internal/engine"
	"github.com/ptdmon/ptdmon/internal/testutil"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// subscribed starts Run on endpoints and returns the feed.
func subscribed(t *testing.T, endpoints ...string) *Feed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	feed := NewFeed(endpoints, time.Minute)
	done := make(chan struct{})
	go func() { Run(ctx, feed, endpoints, quiet); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return feed
}

// publish sends one vLLM-shaped message: topic, sequence, payload.
func publish(t *testing.T, pub zmq4.Socket, seq int64, wall float64) {
	t.Helper()
	payload, err := msgpack.Marshal(map[string]any{"version": 1, "counter_id": seq, "wall_time": wall})
	if err != nil {
		t.Fatal(err)
	}
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], uint64(seq))
	if err := pub.SendMulti(zmq4.NewMsgFrom([]byte{}, s[:], payload)); err != nil {
		t.Fatal(err)
	}
}

// joined sends heartbeats until the feed has heard one (a PUB socket drops
// what it sends before the subscription reaches it), and returns the next
// sequence number.
func joined(t *testing.T, pub zmq4.Socket, feed *Feed) int64 {
	t.Helper()
	var seq int64
	testutil.Eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		publish(t, pub, seq, 0)
		seq++
		return feed.Stats()[0].Messages > 0, "no heartbeat heard"
	})
	return seq
}

// Passes published over loopback add up to their wall times; a publisher
// that starts again (its sequence from 0) is noticed, and read on.
func TestSubscribe(t *testing.T) {
	pub := zmq4.NewPub(context.Background())
	if err := pub.Listen("tcp://127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ep := "tcp://" + pub.Addr().String()
	feed := subscribed(t, ep)
	seq := joined(t, pub, feed)
	before := feed.Stats()[0]
	for i := range 200 {
		publish(t, pub, seq+int64(i), 0.005)
	}
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() (bool, string) {
		s := feed.Stats()[0]
		return s.Messages-before.Messages >= 200, "passes not all read"
	})
	if s := feed.Stats()[0]; math.Abs(s.BusySeconds-1) > 1e-9 || s.Lost != 0 {
		t.Errorf("200 passes of 5 ms: %+v", s)
	}
	var o engine.Observation
	feed.AddTo(&o, time.Now())
	if len(o.Notes) != 0 || o.Counters[0].Value != feed.Stats()[0].BusySeconds {
		t.Errorf("a live stream: %+v, notes %q", o.Counters, o.Notes)
	}

	// The engine restarts on the same port.
	addr := pub.Addr().String()
	pub.Close()
	pub = zmq4.NewPub(context.Background())
	defer pub.Close()
	testutil.Eventually(t, 10*time.Second, 100*time.Millisecond, func() (bool, string) {
		err := pub.Listen("tcp://" + addr)
		return err == nil, "cannot listen again"
	})
	n := feed.Stats()[0].Messages
	testutil.Eventually(t, 15*time.Second, 100*time.Millisecond, func() (bool, string) {
		publish(t, pub, 0, 0.25)
		return feed.Stats()[0].Messages > n, "nothing heard after the restart"
	})
	o = engine.Observation{}
	feed.AddTo(&o, time.Now())
	if note := strings.Join(o.Notes, ";"); !math.IsNaN(o.Counters[0].Value) || !strings.Contains(note, "restarted") {
		t.Errorf("after the publisher restarted: %+v, notes %q", o.Counters, note)
	}
}

// An endpoint nobody listens on leaves the busy time unknown, and says why.
func TestSubscribeUnreachable(t *testing.T) {
	feed := subscribed(t, "tcp://127.0.0.1:1")
	testutil.Eventually(t, 10*time.Second, 50*time.Millisecond, func() (bool, string) {
		var o engine.Observation
		feed.AddTo(&o, time.Now())
		note := strings.Join(o.Notes, ";")
		return math.IsNaN(o.Counters[0].Value) && strings.Contains(note, "dial"), note
	})
}

// The engines publish through libzmq (pyzmq), not this library: the
// testdata's publisher, on Debian's python3-zmq and python3-msgpack, sends
// passes as vLLM does, and every one is read.
func TestSubscribeToLibzmq(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import zmq, msgpack").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but %s lacks zmq or msgpack (apt-get install python3-zmq python3-msgpack): %v", python, err)
		}
		t.Skipf("%s lacks zmq or msgpack (apt-get install python3-zmq python3-msgpack); CI runs this test", python)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "testdata/fpm.py", "publish", "0", "500", "0.002")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait() // ended by the end of its input, else killed by the context
	defer stdin.Close()
	port, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	feed := subscribed(t, "tcp://127.0.0.1:"+strings.TrimSpace(port))
	testutil.Eventually(t, 10*time.Second, 20*time.Millisecond, func() (bool, string) {
		s := feed.Stats()[0]
		return s.Messages >= 501, fmt.Sprintf("%d messages read", s.Messages)
	})
	s := feed.Stats()[0]
	if s.Messages != 501 || s.Lost != 0 || math.Abs(s.BusySeconds-1) > 1e-9 {
		t.Errorf("500 passes of 2 ms and a heartbeat from libzmq: %+v", s)
	}
}
