#!/usr/bin/env bash
# compare-etcd.sh [ROUNDS] [OPS] [THREADS]
#
# Runs go-ycsb's etcd binding (etcd's own Go client) against a 3-member
# etcd and against hybridkv's raft and curp-ho (3 replicas, each with an
# etcd gateway), all on this machine, no emulated delay, every member
# syncing its log to disk: YCSB workload B (95 % reads) and a put-only
# run of the same size, one system after the other, ROUNDS times (default
# 3). Each system starts fresh and is loaded with 10,000 records first.
# Prints every run's throughput and p50/p99 and, per system, the ratio of
# its summed throughput to etcd's.
#
# Needs etcd (Debian's etcd-server), go-ycsb and hybridkv on PATH, or
# ETCD, GO_YCSB, HYBRIDKV set; WORKLOADS names go-ycsb's workloads dir.
set -euo pipefail
rounds=${1:-3}
ops=${2:-20000}
threads=${3:-16}
etcd=${ETCD:-etcd}
ycsb=${GO_YCSB:-go-ycsb}
hkv=${HYBRIDKV:-hybridkv}
workloads=${WORKLOADS:?set WORKLOADS to the workloads directory of go-ycsb}
records=10000
dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap 'cleanup; rm -rf "$dir"' EXIT

start_etcd() { # sets ep to the client endpoints
	local peers="" eps="" i
	for i in 1 2 3; do peers+="m$i=http://127.0.0.1:$((32380 + i)),"; done
	for i in 1 2 3; do
		"$etcd" --name "m$i" --data-dir "$dir/etcd/m$i" \
			--listen-client-urls "http://127.0.0.1:$((32370 + i))" --advertise-client-urls "http://127.0.0.1:$((32370 + i))" \
			--listen-peer-urls "http://127.0.0.1:$((32380 + i))" --initial-advertise-peer-urls "http://127.0.0.1:$((32380 + i))" \
			--initial-cluster "${peers%,}" --initial-cluster-state new >"$dir/etcd-m$i.log" 2>&1 &
		pids+=($!)
		eps+="127.0.0.1:$((32370 + i)),"
	done
	ep=${eps%,}
	sleep 2
}

start_hybridkv() { # $1 protocol; sets ep to the gateways' endpoints
	local eps="" i
	"$hkv" cluster --protocol "$1" --delay 0 --dir "$dir/$1" >"$dir/$1.log" 2>&1 &
	pids+=($!)
	until grep -q "cluster running" "$dir/$1.log"; do sleep 0.2; done
	for i in 0 1 2; do
		"$hkv" gateway --config "$dir/$1/cluster.yaml" --site "site$i" --listen "127.0.0.1:$((32390 + i))" >"$dir/$1-gw$i.log" 2>&1 &
		pids+=($!)
		eps+="127.0.0.1:$((32390 + i)),"
	done
	for i in 0 1 2; do until grep -q "listening on" "$dir/$1-gw$i.log"; do sleep 0.2; done; done
	ep=${eps%,}
}

# ycsb EP PHASE ARGS...: one go-ycsb phase; prints "ops/s p50 p99" of its TOTAL line.
ycsb() {
	local ep=$1 phase=$2
	shift 2
	"$ycsb" "$phase" etcd -P "$workloads/workloadb" -p etcd.endpoints="$ep" -p recordcount=$records \
		-p threadcount="$threads" -p etcd.dial_timeout=5s "$@" >"$dir/ycsb.out" 2>&1
	if grep -q "_ERROR" "$dir/ycsb.out"; then
		echo "go-ycsb reported errors:" >&2
		grep "_ERROR" "$dir/ycsb.out" >&2
		exit 1
	fi
	awk '/^TOTAL/ {for (i = 1; i <= NF; i++) {if ($i == "OPS:") o = $(i+1); if ($i == "50th(us):") m = $(i+1); if ($i == "99th(us):") n = $(i+1)} gsub(",", "", o); gsub(",", "", m); gsub(",", "", n); printf "%s %.2f %.2f\n", o, m/1000, n/1000}' "$dir/ycsb.out"
}

declare -A sum
printf "%-6s %-14s %-9s %10s %8s %8s\n" round system workload "ops/s" "p50 ms" "p99 ms"
for r in $(seq 1 "$rounds"); do
	for sys in etcd raft curp-ho; do
		rm -rf "$dir/etcd" "$dir/raft" "$dir/curp-ho"
		if [ "$sys" = etcd ]; then start_etcd; else start_hybridkv "$sys"; fi
		ycsb "$ep" load -p operationcount=$records >/dev/null
		for w in B puts; do
			extra=(-p operationcount="$ops")
			[ "$w" = puts ] && extra+=(-p readproportion=0 -p updateproportion=1)
			read -r o m n < <(ycsb "$ep" run "${extra[@]}")
			printf "%-6s %-14s %-9s %10s %8s %8s\n" "$r" "$sys" "$w" "$o" "$m" "$n"
			sum[$sys-$w]=$(echo "${sum[$sys-$w]:-0} + $o" | bc)
		done
		cleanup
		pids=()
	done
done
echo
for w in B puts; do
	for sys in raft curp-ho; do
		printf "workload %-5s %-8s throughput / etcd's: %.3f (sums over %d rounds)\n" "$w" "$sys" \
			"$(echo "${sum[$sys-$w]} / ${sum[etcd-$w]}" | bc -l)" "$rounds"
	done
done
