#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside the guest (make demo): a softhca device on a veth, shown by
# the softhca tool and by iproute2's rdma tool; then data between two
# processes (a ping-pong and a bandwidth run of softhca-perf) and XRC
# (one receive QP shared by processes, the legacy API).
set -e
cd "$(dirname "$0")/.."
tool=build/bin/softhca
say() { printf '\n### %s\n' "$*"; }

say "a veth pair with an address"
ip link add demo0 type veth peer name demo1
ip link set demo0 up
ip link set demo1 up
ip addr add 192.0.2.10/24 dev demo0
ip -br link show demo0

say "softhca link add softhca0 netdev demo0  (the module autoloads)"
$tool link add softhca0 netdev demo0
sleep 1

say "softhca show"
$tool show

say "rdma link / rdma dev"
rdma link
rdma dev

say "the port follows the netdev: peer down, then MTU 9000"
ip link set demo1 down
$tool show softhca0 | grep port
ip link set demo1 up
ip link set demo0 mtu 9000
$tool show softhca0 | grep port

say "errors are words: a second device on the same netdev"
$tool link add softhca1 netdev demo0 || true

ip link set demo0 mtu 1500

say "ping-pong between two processes: RC SEND 64 B, one-way latency"
build/bin/softhca-perf send_lat -d softhca0 -s 64 -n 2000 --fork

say "bandwidth between two processes: RC RDMA WRITE 64 KiB and 1 MiB"
build/bin/softhca-perf write_bw -d softhca0 -s 64K,1M --fork

say "XRC: SRQs of one domain shared by processes through one receive QP"
echo "(every XRC opcode; a send to another domain's SRQ refused; ibv_open_qp;"
echo " the legacy API: a creator that exits, two receiver and two initiator"
echo " processes, one killed while registered, the last unregister)"
SOFTHCA_DEV=softhca0 build/selftests/xrc

say "softhca link del softhca0"
$tool link del softhca0
rdma link
echo "(no devices left)"
