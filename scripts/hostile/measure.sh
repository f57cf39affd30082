#!/usr/bin/env bash
# Measures a real `ptdmon serve` against hostile loopback targets:
#   1. four endless-body targets next to a good one (10 req/s): peak RSS and
#      the good target's windowed rate;
#   2. one target with 5,000 new series per scrape: RSS over time.
# usage: scripts/hostile/measure.sh [PTDMON_BINARY] [SECONDS]   (default: build; 60 s)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-}
secs=${2:-60}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
if [[ -z $bin ]]; then
	bin=$work/ptdmon
	(cd "$here/../.." && go build -o "$bin" ./cmd/ptdmon)
fi
py() { # starts a target and waits until it answers (the endless ones are only probed)
	python3 "$here/targets.py" "$@" &
	pids+=($!)
	for _ in $(seq 50); do
		curl -s -m 0.2 -o /dev/null "http://127.0.0.1:$2/metrics" && return
		[[ $? == 28 ]] && return # timed out mid-body: it is up
		sleep 0.1
	done
}
rss() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
hwm() { awk '/^VmHWM/{print $2}' "/proc/$1/status"; }
serve() { # args: listen-port flags...
	local port=$1
	shift
	"$bin" serve -listen "127.0.0.1:$port" -log-level error "$@" >"$work/serve.out" 2>&1 &
	pids+=($!)
	serve_pid=$!
	for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return; sleep 0.1; done
	echo "ptdmon did not start" >&2
	cat "$work/serve.out" >&2
	exit 1
}

echo "== four endless bodies next to a good target, ${secs} s"
py good 19501 10
for p in 19502 19503 19504 19505; do py endless $p; done
serve 19500 -decode good=http://127.0.0.1:19501/metrics \
	-prefill e1=http://127.0.0.1:19502/metrics -prefill e2=http://127.0.0.1:19503/metrics \
	-prefill e3=http://127.0.0.1:19504/metrics -prefill e4=http://127.0.0.1:19505/metrics
start=$(date +%s)
cpu0=$(awk '{print $14+$15}' "/proc/$serve_pid/stat")
sleep "$secs"
cpu1=$(awk '{print $14+$15}' "/proc/$serve_pid/stat")
echo "peak RSS: $(($(hwm "$serve_pid") / 1024)) MiB, RSS now: $(($(rss "$serve_pid") / 1024)) MiB"
echo "CPU: $(python3 -c "print(f'{($cpu1-$cpu0)/100/$secs:.2f}')") cores"
curl -s "http://127.0.0.1:19500/api/v1/snapshot" | python3 -c '
import json, sys
s = json.load(sys.stdin)
for i in s["point"]["instances"]:
    if i["target"] == "good":
        w, r = i.get("requests_per_second_window"), i.get("requests_per_second")
        print(f"good target: window {w:.4f} req/s ({(w-10)/10*100:+.3f}% of 10), instant {r:.4f}")
for t in s["targets"]:
    print("  %s: up=%s failures=%s" % (t["name"], t["up"], t.get("failures", {})))
'
kill "$serve_pid"
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
pids=()

echo "== 5,000 new series per scrape, ${secs}×2 s"
py churn 19511 5000
serve 19510 -prefill churn=http://127.0.0.1:19511/metrics
for i in $(seq 0 10 $((secs * 2))); do
	[[ $i -gt 0 ]] && sleep 10
	echo "t=${i}s RSS $(($(rss "$serve_pid") / 1024)) MiB"
done
curl -s "http://127.0.0.1:19510/api/v1/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    print("  %s: up=%s failures=%s last_error=%r" % (t["name"], t["up"], t.get("failures", {}), t.get("last_error", "")[:120]))
'
