#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# kill -9 in the middle of a transfer (softhca-perf --fork: one process
# per end, runs that would last for minutes): the surviving process ends
# within seconds (flush or retry errors, or its peer's socket closing),
# not a hang; the kernel logs no splat and every QP, CQ, MR and PD of the
# devices is gone afterwards.  Shapes: 1 MiB RDMA WRITEs (either end
# killed), chunked 1 MiB SENDs on four QP pairs across two devices (the
# responder killed while it holds receive WQEs mid-message), RDMA READs
# with completion events and atomics (the requester killed).  Last, the
# responder's device deleted under a transfer.
. "$(dirname "$0")/lib.sh"
P=$REPO/build/bin/softhca-perf

modprobe -r softhca 2>/dev/null
modprobe softhca
softhca_on_veth 2
dmesg -C

# ends_clean DEV...: within 10 s every DEV shows no object at all in
# `rdma resource show`, and the kernel logged no splat.
ends_clean() {
	objects_gone "$@" || return 1
	if dmesg | grep -E 'BUG:|WARNING:|UBSAN:|Oops|circular locking'; then
		return 1
	fi
	return 0
}

# kill_mid WHICH PERF-ARGS...: start the transfer, kill -9 the parent
# (requester) or the child (responder) end.
kill_mid() {
	which=$1
	shift
	"$P" "$@" --fork >/tmp/kill.out 2>&1 &
	parent=$!
	# Both ends connected and moving data: the child exists and a second
	# of traffic went by.
	wait_for 20 sh -c "[ -n \"\$(cat /proc/$parent/task/$parent/children 2>/dev/null)\" ]" ||
		{ echo "no child end"; kill -9 $parent; return 1; }
	child=$(cat /proc/$parent/task/$parent/children | tr -d ' ')
	sleep 2
	if [ "$which" = child ]; then victim=$child survivor=$parent; else victim=$parent survivor=$child; fi
	kill -0 "$survivor" || { echo "the run ended early"; cat /tmp/kill.out; return 1; }
	kill -9 "$victim"
	if ! wait_for 30 sh -c "! kill -0 $survivor 2>/dev/null"; then
		echo "the surviving end ($survivor) still runs 30 s after its peer died"
		kill -9 "$survivor"
		return 1
	fi
	# A process stuck in the kernel cannot be waited for: fail instead.
	wait_for 10 sh -c "! kill -0 $parent 2>/dev/null" ||
		{ echo "the parent ($parent) does not exit"; return 1; }
	wait "$parent" 2>/dev/null
	sed 's/^/# /' /tmp/kill.out | grep -i "error" | head -3
	# The objects of both processes go with them.
	ends_clean sh0 sh1
}

# delete_peer_mid_transfer: `rdma link delete` of the responder's device
# while 64-byte WRITEs from sh0 pour into it (the requester's poller holds
# the peer QP, its device and its MR in its lookup cache): the delete
# ends within seconds, the processes end with errors, nothing is left.
delete_peer_mid_transfer() {
	"$P" write_bw -d sh0 -D sh1 -s 64 -n 50000000 --fork >/tmp/kill.out 2>&1 &
	parent=$!
	sleep 3
	kill -0 "$parent" || { echo "the run ended early"; cat /tmp/kill.out; return 1; }
	timeout 30 rdma link delete sh1 || { echo "rdma link delete sh1 failed or hung"; return 1; }
	wait_for 30 sh -c "! kill -0 $parent 2>/dev/null" ||
		{ echo "softhca-perf still runs after its peer device went"; kill -9 "$parent"; return 1; }
	wait "$parent" 2>/dev/null
	sed 's/^/# /' /tmp/kill.out | grep -i "error" | head -2
	dev_exists sh1 && { echo "sh1 still there"; return 1; }
	ends_clean sh0
}

t kill_write_responder kill_mid child write_bw -d sh0 -s 1M -n 200000
t kill_write_requester kill_mid parent write_bw -d sh0 -s 1M -n 200000
t kill_send_responder_2dev kill_mid child send_bw -d sh0 -D sh1 -s 1M -q 4 -n 100000
t kill_read_requester_events kill_mid parent read_bw -d sh0 -D sh1 -s 256K -e -n 400000
t kill_atomic_requester kill_mid parent atomic_bw -d sh0 -n 50000000
t delete_peer_mid_transfer delete_peer_mid_transfer
cleanup_all
tap_done
