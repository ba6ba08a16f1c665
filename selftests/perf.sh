#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Smoke run of softhca-perf (seconds, no thresholds: figures belong to
# make bench): every test and mode runs to completion and reports sane
# fields, bad options are refused, and the libibverbs build measures
# rdma_rxe the same way.
. "$(dirname "$0")/lib.sh"
P=$REPO/build/bin/softhca-perf
PI=$REPO/build/bin/softhca-perf-ibverbs
pj=/tmp/perf.json

modprobe -r softhca 2>/dev/null
modprobe softhca
# rdma_rxe binds UDP 4791 in this namespace when it loads, and cannot
# once a softhca device has (drivers/softhca/net.c): it loads first.
modprobe rdma_rxe 2>/dev/null
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
softhca_on_veth 2

# perf_json CMD...: CMD --json succeeds; every line has a positive
# figure (latency or rate), a counted syscalls_per_op, and CPU fields
# (the kernel threads' in range).
perf_json() {
	"$@" --json > $pj || return 1
	[ -s $pj ] || { echo "no output"; return 1; }
	while read -r line; do
		case "$line" in
		*'"syscalls_per_op":null'*) echo "system calls not counted: $line"; return 1 ;;
		esac
		echo "$line" | grep -Eq '"(t_median_us|msg_rate_mpps)":[0-9.]*[1-9]' ||
			{ echo "no positive figure: $line"; return 1; }
		echo "$line" | grep -q '"cpu_us_per_op":' || { echo "no CPU field: $line"; return 1; }
		# Kernel threads' CPU per operation: a sane, non-negative
		# figure (a busy thread that ends inside the window once
		# made it wrap around to 7e13).
		echo "$line" | grep -Eq '"kthread_us_per_op":[0-9]{1,6}(\.[0-9]+)?,' &&
		echo "$line" | grep -Eq '"poller_us_per_op":[0-9]{1,6}(\.[0-9]+)?[,}]' ||
			{ echo "kernel thread CPU out of range: $line"; return 1; }
	done < $pj
	cat $pj
}

t perf_latency_tests perf_json sh -c "$P send_lat -d sh0 -s 0,64,70000 -n 200 --json && $P write_lat -d sh0 -s 1,4096 -n 200 --json && $P read_lat -d sh0 -s 64 -n 200 --json && $P atomic_lat -d sh0 -n 200 --cas --json"
t perf_bandwidth_tests perf_json sh -c "$P send_bw -d sh0 -s 64,1M -n 300 --json && $P write_bw -d sh0 -s 64,1M -n 300 -t 16 --json && $P read_bw -d sh0 -s 4K -n 300 --json && $P atomic_bw -d sh0 -n 300 --json"
t perf_table_output sh -c "$P send_lat -d sh0 -n 100 | grep -q 't_median\[us\]' && $P write_bw -d sh0 -n 100 | grep -q 'MsgRate\[Mpps\]'"
t perf_two_devices perf_json sh -c "$P send_lat -d sh0 -D sh1 -s 64 -n 200 --json && $P write_bw -d sh0 -D sh1 -s 64 -q 4 -n 400 --json"
t perf_ud perf_json sh -c "$P send_lat -c UD -d sh0 -D sh1 -s 64,1024 -n 200 --json && $P send_bw -c UD -d sh0 -s 64 -n 300 --json"
t perf_events perf_json sh -c "$P send_lat -d sh0 -s 64 -n 200 --events --json && $P read_bw -d sh0 -s 64 -n 300 --events --json"
t perf_fork perf_json sh -c "$P send_lat -d sh0 -D sh1 -s 64 -n 200 --fork --json && $P send_bw -d sh0 -s 64 -n 300 --fork --events --json && $P write_lat -d sh0 -s 64 -n 200 --fork --json"
# A sender whose receiver sleeps on completion events meets RNR NAKs
# (receives reposted one by one, min_rnr_timer 10 us): its QP goes back
# and forth between the poller and the retry timer every few
# microseconds.  A wait whose timer had fired once counted as not
# pending, and a QP given back then hung (4 runs in 10); 20 runs.
rnr_fork_runs() {
	for i in $(seq 20); do
		timeout 30 "$P" send_bw -d sh0 -s 64 -n 300 --fork --events --json > /dev/null ||
			{ echo "run $i failed"; return 1; }
	done
}
t perf_fork_events_rnr rnr_fork_runs
t perf_idle_qps perf_json $P write_bw -d sh0 -s 64 -n 500 --idle-qps 200
t perf_refuses_bad_options sh -c "
	! $P write_bw -c UD -d sh0 2>/dev/null &&
	! $P write_bw -d sh0 --fork --idle-qps 2 2>/dev/null &&
	! $P send_lat -d sh0 -q 2 2>/dev/null &&
	! $P send_lat -c UD -d sh0 -s 8192 2>/dev/null &&
	! $P send_lat -d nosuchdev 2>/dev/null"

if modprobe rdma_rxe 2>/dev/null && veth_up rv0 rv1 &&
   rdma link add rxe0 type rxe netdev rv0 2>/dev/null && gid0_usable rxe0 rv0; then
	t perf_ibverbs_build_on_rxe perf_json sh -c "$PI send_lat -d rxe0 -s 64 -n 100 --json && $PI write_bw -d rxe0 -s 64 -n 200 --json"
	rdma link delete rxe0
	ip link del rv0
	modprobe -r rdma_rxe
else
	t perf_ibverbs_build_on_rxe sh -c 'echo "SKIP: rdma_rxe cannot be set up in this guest"; exit 77'
fi
rm -f $pj
cleanup_all
t no_softhca_devices_left no_softhca_devices
tap_done
