#!/usr/bin/env bash
# Measures what ptdmon costs on a simulated farm (docs/fleet.md):
#   1. two standalone collectors, -shard 0/2 and -shard 1/2, scraping the farm;
#   2. Prometheus scraping the farm with the generated config, and ptdmon
#      reading it (-source prometheus=URL).
# CPU is user+system time from /proc over the measured span, memory the
# resident set (VmRSS) at the end and its peak (VmHWM).
#
#   bash scripts/fleet-cost.sh            # 100 engines, 40 s per measurement
#   N=50 SPAN=60 bash scripts/fleet-cost.sh   # 4×N engines
set -euo pipefail
N=${N:-25}          # prefill and decode instances per group; two groups -> 4×N engines
SPAN=${SPAN:-40}    # seconds measured, after a 15 s warm-up
cd "$(dirname "$0")/.."
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

go build -o "$work/ptdmon" ./cmd/ptdmon
hz=$(getconf CLK_TCK)
cpu() { awk -v hz="$hz" '{print ($14+$15)/hz}' "/proc/$1/stat"; }
mem() { awk '/^VmRSS|^VmHWM/{printf "%s %.0f MiB  ", $1, $2/1024}' "/proc/$1/status"; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# 2 req/s per prefill engine, as the balanced scenario.
"$work/ptdmon" sim -scenario balanced -prefill "$N" -decode "$N" -rate $((4 * N)) \
	-config-out "$work/farm.yaml" -log-level warn >"$work/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/farm.yaml" ] && break; sleep 0.2; done
engines=$(grep -c '^  - name:' "$work/farm.yaml")
echo "farm: $engines simulated engines; load average $(cut -d' ' -f1-3 /proc/loadavg)"

measure() { # label:pid ...
	sleep 15
	local -A c0
	local lp
	for lp in "$@"; do c0[$lp]=$(cpu "${lp#*:}"); done
	sleep "$SPAN"
	for lp in "$@"; do
		echo "${lp%%:*}: $(awk -v a="${c0[$lp]}" -v b="$(cpu "${lp#*:}")" -v s="$SPAN" 'BEGIN{printf "%.3f cores", (b-a)/s}')  $(mem "${lp#*:}")"
	done
}

# 1. Two shards.
s0=$(port); s1=$(port)
"$work/ptdmon" serve -config "$work/farm.yaml" -shard 0/2 -listen "127.0.0.1:$s0" -log-level warn >"$work/s0.log" 2>&1 &
p0=$!; pids+=($p0)
"$work/ptdmon" serve -config "$work/farm.yaml" -shard 1/2 -listen "127.0.0.1:$s1" -log-level warn >"$work/s1.log" 2>&1 &
p1=$!; pids+=($p1)
sleep 3
for s in $s0 $s1; do
	echo "shard on :$s scrapes $(curl -s "127.0.0.1:$s/api/v1/targets" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') targets"
done
measure "sim:${pids[0]}" "shard-0/2:$p0" "shard-1/2:$p1"
kill $p0 $p1

# 2. Prometheus scraping the farm, ptdmon reading Prometheus.
if command -v prometheus >/dev/null; then
	pp=$(port); ps=$(port)
	"$work/ptdmon" gen prometheus -config "$work/farm.yaml" -ptdmon "127.0.0.1:1" -out "$work/prometheus.yml" >/dev/null
	prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
		--web.listen-address="127.0.0.1:$pp" --log.level=error >"$work/prom.log" 2>&1 &
	pprom=$!; pids+=($pprom)
	"$work/ptdmon" serve -source "prometheus=http://127.0.0.1:$pp" -listen "127.0.0.1:$ps" -log-level debug >"$work/src.log" 2>&1 &
	psrc=$!; pids+=($psrc)
	measure "prometheus:$pprom" "ptdmon-source:$psrc"
	grep 'msg="TSDB step"' "$work/src.log" | tail -n "$SPAN" | python3 -c '
import re,sys
b=[];t=[]
for l in sys.stdin:
    b.append(int(re.search(r"bytes=(\d+)",l).group(1)))
    m=re.search(r"took=([\d.]+)(ms|s|µs)",l); v=float(m.group(1)); t.append(v*{"ms":1,"s":1000,"µs":0.001}[m.group(2)])
b.sort(); t.sort()
print("TSDB step: median %.0f KiB read, median %.0f ms, p90 %.0f ms over %d steps" % (b[len(b)//2]/1024, t[len(t)//2], t[int(len(t)*0.9)], len(t)))'
	echo "targets seen by ptdmon -source: $(curl -s "127.0.0.1:$ps/api/v1/targets" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')"
fi
