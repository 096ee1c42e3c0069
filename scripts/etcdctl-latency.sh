#!/usr/bin/env bash
# etcdctl-latency.sh PROTOCOL [PUTS] [DELAY_MS]
#
# Starts a local 3-site cluster of PROTOCOL (DELAY_MS one way between
# sites, default 25) and an etcd gateway at the first site, then runs
# PUTS (default 200) separate `etcdctl put` processes and as many
# `etcdctl get --consistency=s` ones against it, one after another, and
# prints the median and p90 wall time of each (process start included)
# and what the gateway served: its own latency per request and the paths
# the operations took (fast, slow, weak, ...).
#
# Needs hybridkv and etcdctl on PATH, or HYBRIDKV and ETCDCTL set.
set -euo pipefail
proto=${1:?protocol}
n=${2:-200}
delay=${3:-25}
hkv=${HYBRIDKV:-hybridkv}
ctl=${ETCDCTL:-etcdctl}
dir=$(mktemp -d)
trap 'kill $gw $cl 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT

"$hkv" cluster --protocol "$proto" --delay "$delay" --dir "$dir/cluster" >"$dir/cluster.log" 2>&1 &
cl=$!
until grep -q "cluster running" "$dir/cluster.log"; do sleep 0.2; done
"$hkv" gateway --config "$dir/cluster/cluster.yaml" --listen 127.0.0.1:0 >"$dir/gateway.log" 2>&1 &
gw=$!
until grep -q "listening on" "$dir/gateway.log"; do sleep 0.2; done
ep=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$dir/gateway.log")

# time_ms CMD...: runs CMD, prints its wall time in ms.
time_ms() {
	local s e
	s=$(date +%s%N)
	"$@" >/dev/null
	e=$(date +%s%N)
	echo $(((e - s) / 1000))
}
stats() { # reads µs, one per line
	sort -n | awk '{v[NR]=$1} END {printf "median %.2f ms, p90 %.2f ms, n %d\n", v[int(NR*0.5+0.5)]/1000, v[int(NR*0.9+0.5)]/1000, NR}'
}
"$ctl" --endpoints="$ep" put warmup 1 >/dev/null
for i in $(seq 1 "$n"); do time_ms "$ctl" --endpoints="$ep" put "key$i" "value$i"; done >"$dir/put.us"
for i in $(seq 1 "$n"); do time_ms "$ctl" --endpoints="$ep" get "key$i" --consistency=s; done >"$dir/get.us"
for i in $(seq 1 20); do time_ms "$ctl" --endpoints="$ep" version; done >"$dir/version.us"
echo "$proto, $delay ms one way, etcdctl at the first site:"
echo "  etcdctl put (wall time):                $(stats <"$dir/put.us")"
echo "  etcdctl get --consistency=s (wall time): $(stats <"$dir/get.us")"
echo "  etcdctl version (no request; process start): $(stats <"$dir/version.us")"
kill -INT $gw
wait $gw || true
echo "  gateway served:"
sed -n '/^put:\|^range:\|^delete\|^txn/p' "$dir/gateway.log" | sed 's/^/    /'
