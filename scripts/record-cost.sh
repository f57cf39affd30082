#!/usr/bin/env bash
# Measures what `serve -record` adds to serve's CPU (docs/performance.md#recording):
# `ptdmon serve` and `ptdmon serve -record DIR` read the same targets at the same
# time, over the same window, so that both see the same machine; each round
# starts the other one first. CPU is user+system time from /proc over the
# window, divided by the samples read (ptd_scrape_samples_total).
#
#   bash scripts/record-cost.sh                        # simulated engines, 5 rounds
#   CONFIG=ptdmon.yaml ROUNDS=8 bash scripts/record-cost.sh   # your own targets
set -euo pipefail
N=${N:-50}          # simulated prefill and decode instances per group: 4×N engines
ROUNDS=${ROUNDS:-5}
WARM=${WARM:-20}    # seconds before each window
SPAN=${SPAN:-60}    # seconds measured
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/ptdmon" ./cmd/ptdmon
hz=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
samples() { curl -s "127.0.0.1:$1/metrics" | awk '/^ptd_scrape_samples_total/ {s+=$2} END {printf "%.0f", s}'; }

config=${CONFIG:-}
if [ -z "$config" ]; then
	config=$work/farm.yaml
	"$work/ptdmon" sim -scenario balanced -prefill "$N" -decode "$N" -rate $((4 * N)) \
		-config-out "$config" -log-level warn >"$work/sim.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do [ -s "$config" ] && break; sleep 0.2; done
fi
echo "targets: $(grep -c '^  - name:' "$config") in $config; load average $(cut -d' ' -f1-3 /proc/loadavg)"

ratios=()
for r in $(seq "$ROUNDS"); do
	pp=$(port); pr=$(port)
	start_plain() {
		"$work/ptdmon" serve -config "$config" -listen "127.0.0.1:$pp" -log-level warn >"$work/plain.log" 2>&1 &
		plain=$!; pids+=($plain)
	}
	start_record() {
		"$work/ptdmon" serve -config "$config" -record "$work/rec$r" -listen "127.0.0.1:$pr" -log-level warn >"$work/record.log" 2>&1 &
		rec=$!; pids+=($rec)
	}
	if [ $((r % 2)) = 1 ]; then start_plain; start_record; else start_record; start_plain; fi
	sleep "$WARM"
	c0p=$(cpu $plain); c0r=$(cpu $rec); s0p=$(samples $pp); s0r=$(samples $pr)
	sleep "$SPAN"
	c1p=$(cpu $plain); c1r=$(cpu $rec); s1p=$(samples $pp); s1r=$(samples $pr)
	kill $plain $rec; wait $plain $rec 2>/dev/null || true
	line=$(awk -v cp=$((c1p - c0p)) -v cr=$((c1r - c0r)) -v sp=$((s1p - s0p)) -v sr=$((s1r - s0r)) -v hz="$hz" 'BEGIN {
		up = 1e6 * cp / hz / sp; ur = 1e6 * cr / hz / sr
		printf "%.4f %.4f %.3f", up, ur, ur / up }')
	read -r up ur ratio <<<"$line"
	ratios+=("$ratio")
	echo "round $r: serve $up µs/sample, serve -record $ur µs/sample, ratio $ratio; load average $(cut -d' ' -f1 /proc/loadavg); recording $(du -sh "$work/rec$r" | cut -f1)"
	rm -rf "$work/rec$r"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {
	m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
	printf "median ratio %.3f (%d rounds, %.3f to %.3f): recording adds %+.0f%%\n", m, NR, v[1], v[NR], 100 * (m - 1) }'
