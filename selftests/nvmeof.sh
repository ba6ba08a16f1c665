#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# NVMe over Fabrics on softhca: Debian's nvmet/nvmet-rdma (the target)
# and nvme-rdma (the host), unmodified kernel ULPs that need fast
# registration (drivers/softhca/fastreg.c): the host registers every
# I/O's pages with REG_MR, the target moves the data with RDMA READ and
# WRITE on those rkeys and answers with SEND_WITH_INV, or the host
# invalidates with LOCAL_INV.  dd writes and reads back 1 MiB blocks
# (big_blocks: READs long enough for the host's QP worker, the one
# point of data the debug kernel runs), then fio writes random blocks
# of 4 KiB and 128 KiB with checksums, reads every one back and
# verifies it.
#
# Two devices, as two HCAs of one host cabled together: the target's
# port on sh0 (sv0, $A), the host on sh1 (sv1, $B: nvme connect -w), and
# the traffic between them crosses the veth sv1 <-> sv0 as RoCEv2.  Both
# ULPs open their cm_ids in the initial namespace, so both addresses are
# local there, and that takes three things:
# - softhca's same_host parameter off: otherwise a device reaches
#   another device of its namespace through the same-host transport,
#   with no packets (loopback.c);
# - permanent neighbours: a cm_id bound to $B resolves $A with the
#   route lookup bound to sv1 (rdma_cm passes the bound netdev as the
#   output interface), which skips the local route of $A (its netdev is
#   sv0) and takes sv1's connected route, so rdma_cm waits for ARP; and
#   an ARP request from a local address is refused as a martian source.
#   Without them the host's connect ends with ADDR_ERROR -ETIMEDOUT
#   after nvme-rdma's 3 s, which it reports as ECONNRESET ("Connection
#   reset by peer"): that was the whole of the failure;
# - accept_local and rp_filter 0 on both veths: a packet from $B arrives
#   on sv0, from an address that is local.
# Every route lookup involved (rdma_cm's, ib_core's for the passive
# side's MAC, softhca's transmit) names the output netdev, so no policy
# rule is needed (tools/bench/wire.sh needs one for rdma_rxe).  The
# veths carry 9000-byte frames: a 4096-byte path MTU, 4 KiB of data per
# packet.  The test shows that fio's data crossed the veth both ways:
# the devices' RoCEv2 byte counters and the veths' around fio.
#
# Sizes: a 256 MiB namespace (a sparse file on the guest's tmpfs), of
# which fio writes and verifies all: 4 jobs x 64 MiB of random blocks,
# half of them 4 KiB (one page registered per I/O) and half 128 KiB (32
# pages), at iodepth 16 on 2 I/O queues (one a vCPU of the guest).  On
# the wire each byte costs a copy and a CRC-32 on both ends and every
# packet the IP stack under TCG: on a busy host 4 KiB blocks alone took
# 300 s (900 write IOPS), 128 KiB ones 80 s.  The mix of 4 x 128 MiB
# took 26 s for the write and verify passes (42 s the whole test) with
# the guest CPU without ERMS (run-guest's SOFTHCA_VM_CPU), 32 s inside
# make check beside the debug tier: halved since, for make check's time.
#
# Then the target's sh0 is deleted while fio runs: nvmet-rdma drops its
# queues and its port's listener (6.1 never listens again by itself), the
# host sees its queues go and reconnects every 5 s (reconnect-delay).
# The test puts sh0 back at once and enables the port again, as an
# administrator would, and the host must reconnect, fio end (without
# errors: the multipath head holds the I/O while the controller
# reconnects) and the namespace read back what was written after.  The
# device is back before the host's first attempt: an attempt that found
# no device on sv0 would wait out ib_cm's REQ retries (15 x 4.3 s)
# before failing.  Last, the host's sh1 is deleted while fio runs:
# nvme-rdma deletes the controller on it (its device removal), I/O ends
# in errors, nothing hangs; any splat fails the run in the harness.
. "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d)
A=10.9.0.1	# sv0, sh0: the target's port
B=10.9.0.2	# sv1, sh1: the host's side (nvme connect -w)
NQN=nqn.2026-11.org.softhca:nvmeof-test
HOSTNQN=nqn.2026-11.org.softhca:nvmeof-host
CFS=/sys/kernel/config/nvmet
JOBS=4
# A tenth on the debug kernel (lib.sh: scaled), several times slower.
JOBSIZE=$(scaled 64)M
BS=4k/50:128k/50

need() {
	command -v "$1" > /dev/null ||
		{ echo "SKIP: $1 not installed (tools/setup-deps: nvme-cli fio)"; return 77; }
}

# need_fio: fio, and the SysV shm it keeps its job table in (even with
# --thread).  The debug kernel has no CONFIG_SYSVIPC: the fio points skip
# there, saying so.  Asked of the kernel before fio starts: fio's own
# "failed to setup shm segment" can come after a point has gone on (a
# slow guest), and the point then failed on fio's exit status.
need_fio() {
	need fio || return 77
	[ -e /proc/sysvipc/shm ] ||
		{ echo "SKIP: fio needs SysV shm, which this kernel lacks (no /proc/sysvipc)"; return 77; }
}

# configfs makes /sys/kernel/config when it loads (nvmet needs it).
modules() {
	for m in nvmet nvmet-rdma nvme-rdma; do
		modprobe $m || { echo "SKIP: no module $m in this kernel"; return 77; }
	done
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config
}

# The target: a file-backed namespace, an RDMA port on $A.
target_up() {
	truncate -s 256M "$TMP/ns.img" || return 1
	mkdir "$CFS/subsystems/$NQN" || return 1
	echo 1 > "$CFS/subsystems/$NQN/attr_allow_any_host" || return 1
	mkdir "$CFS/subsystems/$NQN/namespaces/1" || return 1
	echo "$TMP/ns.img" > "$CFS/subsystems/$NQN/namespaces/1/device_path" || return 1
	# tmpfs has no O_DIRECT, nvmet's default for a file.
	echo 1 > "$CFS/subsystems/$NQN/namespaces/1/buffered_io" || return 1
	echo 1 > "$CFS/subsystems/$NQN/namespaces/1/enable" || return 1
	mkdir "$CFS/ports/1" || return 1
	echo rdma > "$CFS/ports/1/addr_trtype" || return 1
	echo ipv4 > "$CFS/ports/1/addr_adrfam" || return 1
	echo $A > "$CFS/ports/1/addr_traddr" || return 1
	echo 4420 > "$CFS/ports/1/addr_trsvcid" || return 1
	ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN" || return 1
	dmesg | grep -q "nvmet_rdma: enabling port 1 ($A:4420)" ||
		{ dmesg | tail -5; return 1; }
}

target_down() {
	rm -f "$CFS/ports/1/subsystems/$NQN"
	rmdir "$CFS/ports/1" 2>/dev/null
	echo 0 > "$CFS/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
	rmdir "$CFS/subsystems/$NQN/namespaces/1" 2>/dev/null
	rmdir "$CFS/subsystems/$NQN" 2>/dev/null
	true
}

# The namespace's block device once the host has it: the multipath
# head nvmeXnY, not its hidden per-controller path nvmeXcZnY.
nsdev() {
	for d in /sys/block/nvme*n1; do
		case ${d##*/} in
		*c*) continue ;;
		esac
		[ -e "$d" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}

# connect [OPTIONS]: nvme-rdma from $B to the target, 2 I/O queues;
# the namespace's device must appear, the host's QPs on sh1 and the
# target's on sh0.
connect() {
	need nvme || return 77
	timeout 60 nvme connect -t rdma -a $A -w $B -s 4420 -n $NQN -q $HOSTNQN -i 2 "$@" \
		> "$TMP/connect" 2>&1 || { cat "$TMP/connect"; dmesg | tail -20; return 1; }
	wait_for 20 nsdev || { echo "no namespace device"; dmesg | tail -20; return 1; }
	c=$(grep -l "$NQN" /sys/class/nvme/nvme*/subsysnqn | head -1)
	c=${c%/subsysnqn}
	[ "$(cat "$c/transport")" = rdma ] || { echo "transport $(cat "$c/transport")"; return 1; }
	# The admin queue and 2 I/O queues: 3 RC QPs of rdma_cm on each.
	for d in sh0 sh1; do
		n=$(rdma resource show qp 2>/dev/null | grep "^link $d/" | grep -c 'type RC .*comm \[rdma_cm\]')
		[ "$n" = 3 ] || { echo "$d: $n RC QPs of rdma_cm, not 3"; rdma resource show qp; return 1; }
	done
	echo "NOTE: $(nsdev) through $(cat "$c/address"), $(dmesg | grep -oE 'creating [0-9]+ I/O queues' | tail -1)"
}

# fio_verify: random BS writes over JOBS x JOBSIZE with crc32c
# headers, then every block read back and checked (verify_fatal: the
# first bad block fails).
fio_verify() {
	need_fio || return 77
	dev=$(nsdev) || { echo "no namespace device"; return 1; }
	c0=$(counters)
	t0=$(date +%s)
	timeout 300 fio --name=nvmeof --filename="$dev" --direct=1 \
		--ioengine=libaio --rw=randwrite --bssplit=$BS --iodepth=16 \
		--numjobs=$JOBS --size=$JOBSIZE --offset_increment=$JOBSIZE \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--verify_state_save=0 \
		--group_reporting > "$TMP/fio" 2>&1
	rc=$?
	[ $rc = 0 ] || { echo "fio exit $rc"; tail -30 "$TMP/fio"; dmesg | tail -20; return 1; }
	grep -q "err= 0" "$TMP/fio" || { cat "$TMP/fio"; return 1; }
	echo "NOTE: $JOBS x $JOBSIZE written and verified in $(( $(date +%s) - t0 )) s"
	grep -E "^ +(write|read): IOPS" "$TMP/fio" | sed 's/^ */NOTE: /'
	crossed "$c0" "$(counters)" || return 1
	read_notes
}

# read_notes: how the READs fared so far (the target's sh0 reads what fio
# writes from the host's sh1): READs sent again early (read_probes,
# read_stalls) and answers ended because their fast-reg MR was
# invalidated meanwhile (tx_read_revoked), and duplicate requests taken
# (rx_duplicates).  Told, not checked: they depend on timing.
read_notes() {
	for d in sh0 sh1; do
		printf 'NOTE: %s' "$d"
		for k in read_probes read_stalls tx_read_revoked rx_duplicates; do
			f=/sys/class/infiniband/$d/ports/1/hw_counters/$k
			[ -r "$f" ] && printf ' %s %s' "$k" "$(cat "$f")"
		done
		echo
	done
}

# counters: the RoCEv2 bytes sh0 and sh1 sent and took (BTH to ICRC),
# then the bytes the veths sent.
counters() {
	for d in sh0 sh1; do
		for k in tx_bytes rx_bytes; do
			cat "/sys/class/infiniband/$d/ports/1/hw_counters/$k"
		done
	done
	cat /sys/class/net/sv0/statistics/tx_bytes /sys/class/net/sv1/statistics/tx_bytes
}

# crossed BEFORE AFTER: fio's data went over the wire from sh1 to sh0
# (the target's RDMA READs of what fio writes) and back (its RDMA WRITEs
# of what fio reads), across the veth: each device sent and took, and
# each veth sent, at least the JOBS x JOBSIZE fio wrote (and as much
# again read back), in MiB.
crossed() {
	{ echo "$1"; echo "$2"; } | tr '\n' ' ' | awk -v n=$(( JOBS * ${JOBSIZE%M} )) '
	BEGIN { split("sh0_tx sh0_rx sh1_tx sh1_rx sv0_tx sv1_tx", k) }
	{
		for (i = 1; i <= 6; i++) {
			d = int(($(i + 6) - $i) / 1048576)
			line = line " " k[i] " " d
			if (d < n)
				bad = bad " " k[i]
		}
	}
	END {
		print "NOTE: MiB on the wire:" line " (fio: " n " MiB each way)"
		if (bad != "") {
			print "less than fio moved:" bad
			exit 1
		}
	}'
}

# rough_fio: fio writes and verifies 4 x 2 MiB while the veths lose 5 %
# of the packets both ways, duplicate 2 % and reorder a quarter
# (wire_lib.sh's ROUGH).  rdma_cm gives nvme-rdma's QPs the local ACK
# timeout 19 (2.1 s), and its commands, responses and 4 KiB READs are
# one packet each: without tail probes (drivers/softhca/wire_tail.c)
# every last packet lost, or its ACK, waited the timeout out, fio ran at
# 7-9 IOPS and now and then an I/O timed out (30 s) and the host
# reconnected.  Now: fio ends clean, no I/O timed out, no reconnect,
# both devices sent tail probes, and at most two ACK timeouts ran out
# on the two devices together (none in three rounds alone since long
# ranges are probed too, a lost sequence NAK is sent again and a READ
# probed up to three times; 3-6 a round before).
rough_fio() {
	need_fio || return 77
	rough_wire fio_2m
}

fio_2m() {
	JOBSIZE=2M fio_verify
}

# rough_dd: where fio cannot run (the debug kernel), the same rough wire
# under dd: 1 MiB written in 4 KiB direct I/Os (the target's one-packet
# READs of the host's memory), 1 MiB in 128 KiB ones (READs of 32
# packets, the reorder window's), all read back in 4 KiB I/Os (the
# target's one-packet WRITEs) and compared.  One I/O at a time: every
# packet is a tail.  So the tail probes and the READ window run under
# KASAN and lockdep too.
rough_dd() {
	if need_fio > /dev/null; then
		echo "SKIP: fio_on_a_rough_wire runs here, with fio"
		return 77
	fi
	rough_wire dd_verify
}

dd_verify() {
	dev=$(nsdev) || { echo "no namespace device"; return 1; }
	t0=$(date +%s)
	head -c 2097152 /dev/urandom > "$TMP/rough" &&
	dd if="$TMP/rough" of="$dev" bs=4k count=256 oflag=direct seek=4096 status=none &&
	dd if="$TMP/rough" of="$dev" bs=128k count=8 skip=8 oflag=direct seek=136 status=none &&
	dd if="$dev" of="$TMP/rough2" bs=4k count=512 iflag=direct skip=4096 status=none &&
	cmp "$TMP/rough" "$TMP/rough2" || { echo "2 MiB on the rough wire do not read back"; return 1; }
	echo "NOTE: 2 MiB written and read back in $(( $(date +%s) - t0 )) s"
	read_notes
}

# rough_wire LOAD: LOAD (a command) while the veths lose, duplicate and
# reorder packets; then no I/O timed out, no reconnect, both devices
# probed and at most two ACK timeouts ran out.
rough_wire() {
	p0=$(probes)
	tmo0=$(timeouts)
	n0=$(dmesg | grep -cE "$NVME_TROUBLE")
	for v in sv0 sv1; do
		tc qdisc add dev $v root netem loss 5% duplicate 2% delay 2ms reorder 25% 50% ||
			{ echo "no netem here"; tc qdisc del dev sv0 root 2>/dev/null; return 1; }
	done
	"$@"
	rc=$?
	for v in sv0 sv1; do tc qdisc del dev $v root; done
	[ $rc = 0 ] || return $rc
	echo "NOTE: tail probes (sh0 sh1) before: $p0, after: $(probes)"
	tmo1=$(timeouts)
	echo "NOTE: ACK timeouts (sh0 sh1) before: $tmo0, after: $tmo1;" \
		"sequence NAKs sent again: $(counter tx_naks_again)"
	n=$(dmesg | grep -cE "$NVME_TROUBLE")
	[ "$n" = "$n0" ] || {
		echo "the host timed out or reconnected:"
		dmesg | grep -E "$NVME_TROUBLE" | tail -5
		return 1
	}
	probes | awk -v p0="$p0" '{ split(p0, a, " ") }
		$1 <= a[1] || $2 <= a[2] { print "a device sent no tail probe"; exit 1 }' ||
		return 1
	echo "$tmo0 $tmo1" | awk '$3 + $4 - $1 - $2 > 2 {
		print "more than two ACK timeouts ran out"; exit 1 }'
}

# What the host logs when an I/O times out or it reconnects.
NVME_TROUBLE='nvme nvme[0-9]+: (I/O [0-9]+ QID [0-9]+ timeout|Reconnecting)'

# counter NAME: sh0's and sh1's hw counter NAME.
counter() {
	echo "$(cat /sys/class/infiniband/sh0/ports/1/hw_counters/$1)" \
		"$(cat /sys/class/infiniband/sh1/ports/1/hw_counters/$1)"
}

# probes: the tail probes sh0 and sh1 sent so far.
probes() {
	counter tail_probes
}

# timeouts: the ACK timeouts that ran out on sh0 and sh1 so far.
timeouts() {
	counter ack_timeouts
}

# big_blocks: 8 MiB of random data written and read back in 1 MiB
# direct I/Os, without fio (so on the debug kernel too): the target
# READs each block from the host's fast-reg MR in READs of more than 16
# packets, which the host's QP worker answers under the MR's fr_lock
# (wire_rc_resp.c), and WRITEs it back to another.
big_blocks() {
	dev=$(nsdev) || { echo "no namespace device"; return 1; }
	r0=$(cat /sys/class/infiniband/sh1/ports/1/hw_counters/tx_read_resps)
	head -c 8388608 /dev/urandom > "$TMP/big" &&
	dd if="$TMP/big" of="$dev" bs=1M oflag=direct seek=3 status=none &&
	dd if="$dev" of="$TMP/big2" bs=1M iflag=direct skip=3 count=8 status=none &&
	cmp "$TMP/big" "$TMP/big2" || { echo "8 MiB in 1 MiB blocks do not read back"; return 1; }
	r=$(($(cat /sys/class/infiniband/sh1/ports/1/hw_counters/tx_read_resps) - r0))
	echo "NOTE: sh1 sent $r READ responses for the 8 MiB"
	[ "$r" -ge 2048 ] || { echo "sh1 sent $r READ responses, fewer than 8 MiB in 4 KiB"; return 1; }
}

disconnect() {
	timeout 60 nvme disconnect -n $NQN > "$TMP/disc" 2>&1 || { cat "$TMP/disc"; return 1; }
	grep -q "disconnected 1 controller" "$TMP/disc" || { cat "$TMP/disc"; return 1; }
	wait_for 10 sh -c '! ls /sys/block/nvme* > /dev/null 2>&1'
}

# port_again: the port listens again (its subsystem unlinked and linked:
# nvmet_rdma_remove_port(), then _add_port()).
port_again() {
	n0=$(dmesg | grep -c "nvmet_rdma: enabling port 1 ($A:4420)")
	rm "$CFS/ports/1/subsystems/$NQN" &&
	ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN" || return 1
	wait_for 10 sh -c "[ \$(dmesg | grep -c 'nvmet_rdma: enabling port 1 ($A:4420)') -gt $n0 ]" ||
		{ echo "port 1 not enabled again"; dmesg | tail -10; return 1; }
}

# fio_busy NAME SECS WAIT: 4 KiB random writes on $dev for SECS in the
# background (fpid; output in $TMP/fio-NAME), still running WAIT s later.
fio_busy() {
	timeout 120 fio --name="nvmeof-$1" --filename="$dev" --direct=1 \
		--ioengine=libaio --rw=randwrite --bs=4k --iodepth=16 \
		--numjobs=2 --size=$JOBSIZE --time_based --runtime="$2" \
		> "$TMP/fio-$1" 2>&1 &
	fpid=$!
	sleep "$3"
	kill -0 $fpid 2>/dev/null || { echo "fio ended early"; cat "$TMP/fio-$1"; return 1; }
}

# sh0, the target's device, goes while fio writes and comes back: the
# host reconnects, fio ends cleanly, the namespace works.
target_gone_and_back() {
	need_fio || return 77
	dev=$(nsdev) || { echo "no namespace device"; return 1; }
	r0=$(dmesg | grep -cE "nvme nvme[0-9]+: Successfully reconnected")
	fio_busy tgt 15 3 || return $?
	t0=$(date +%s)
	timeout 60 rdma link delete sh0 || { echo "link delete of sh0 failed or hung"; return 1; }
	t1=$(date +%s)
	rdma link add sh0 type softhca netdev sv0 &&
	wait_for 10 grep -q ffff /sys/class/infiniband/sh0/ports/1/gids/1 ||
		{ echo "sh0 did not come back"; return 1; }
	port_again || return 1
	wait_for 60 sh -c "[ \$(dmesg | grep -cE 'nvme nvme[0-9]+: Successfully reconnected') -gt $r0 ]" ||
		{ echo "the host did not reconnect"; dmesg | tail -30; return 1; }
	t2=$(date +%s)
	wait $fpid
	frc=$?
	[ $frc != 124 ] || { echo "fio hung"; dmesg | tail -30; return 1; }
	[ $frc = 0 ] || { echo "fio exit $frc"; tail -20 "$TMP/fio-tgt"; return 1; }
	# What the host writes now, it reads back, through the new device.
	head -c 1048576 /dev/urandom > "$TMP/blk" &&
	dd if="$TMP/blk" of="$dev" bs=64k oflag=direct seek=7 status=none &&
	dd if="$dev" of="$TMP/blk2" bs=64k iflag=direct skip=7 count=16 status=none &&
	cmp "$TMP/blk" "$TMP/blk2" || { echo "the namespace does not read back"; return 1; }
	n=$(rdma resource show qp 2>/dev/null | grep "^link sh0/" | grep -c 'type RC .*comm \[rdma_cm\]')
	[ "$n" = 3 ] || { echo "sh0: $n RC QPs of rdma_cm after the reconnect, not 3"; return 1; }
	echo "NOTE: sh0 deleted in $((t1 - t0)) s under fio, back, host reconnected $((t2 - t1)) s later; fio: $(grep -m1 -oE 'err= *[0-9]+' "$TMP/fio-tgt")"
	dmesg | grep -E "nvme|nvmet" | tail -4 | sed 's/^/NOTE: /'
}

# sh1, the host's device, goes while fio writes: fio ends (I/O errors:
# nvme-rdma deletes the controller on it), the link delete returns, no
# hang.
delete_under_fio() {
	need_fio || return 77
	dev=$(nsdev) || { echo "no namespace device"; return 1; }
	fio_busy del 100 5 || return $?
	timeout 60 rdma link delete sh1 || { echo "link delete failed or hung"; return 1; }
	wait $fpid
	frc=$?
	[ $frc != 124 ] || { echo "fio hung"; dmesg | tail -30; return 1; }
	! dev_exists sh1 || { echo "sh1 still there"; return 1; }
	# fio saw its I/O fail (EIO), or the host logged a reconnect attempt.
	grep -qE "err= *5/" "$TMP/fio-del" ||
		dmesg | grep -qE "nvme nvme[0-9]+: Reconnecting" ||
		{ echo "no I/O error, no reconnect attempt"; dmesg | tail -30; return 1; }
	# The controller goes (at once, or after ctrl_loss_tmo).
	wait_for 30 sh -c '! ls /sys/block/nvme* > /dev/null 2>&1' ||
		{ echo "the controller stayed"; dmesg | tail -30; return 1; }
	echo "NOTE: fio exit $frc: $(grep -m1 -oE 'err=[ 0-9]+/[^,]*' "$TMP/fio-del")"
	dmesg | grep nvme | tail -6 | sed 's/^/NOTE: /'
}

# The two devices, and the routes between them (see the header).
two_devices() {
	[ -w /sys/module/softhca/parameters/same_host ] ||
		{ echo "softhca has no same_host parameter"; return 1; }
	echo N > /sys/module/softhca/parameters/same_host || return 1
	veth_up sv0 sv1 &&
	ip link set sv0 mtu 9000 && ip link set sv1 mtu 9000 &&
	ip addr add $A/24 dev sv0 && ip addr add $B/24 dev sv1 || return 1
	ip neigh replace $A dev sv1 lladdr "$(cat /sys/class/net/sv0/address)" nud permanent &&
	ip neigh replace $B dev sv0 lladdr "$(cat /sys/class/net/sv1/address)" nud permanent || return 1
	for i in sv0 sv1; do
		sysctl -qw net.ipv4.conf.$i.accept_local=1 net.ipv4.conf.$i.rp_filter=0 || return 1
	done
	# rp_filter counts the larger of "all" and the netdev's.
	sysctl -qw net.ipv4.conf.all.rp_filter=0 || return 1
	rdma link add sh0 type softhca netdev sv0 &&
	rdma link add sh1 type softhca netdev sv1 || return 1
	# The IPv4 GIDs (index 1, after the link-local one).
	for d in sh0 sh1; do
		wait_for 10 grep -q ffff /sys/class/infiniband/$d/ports/1/gids/1 ||
			{ echo "$d: no IPv4 GID"; return 1; }
	done
	for d in sh0 sh1; do
		"$TOOL" show $d | grep -q "mtu 4096\$" || { "$TOOL" show $d; return 1; }
	done
	echo "NOTE: sh0 on sv0 $A, sh1 on sv1 $B, same_host N, active MTU 4096"
}

modprobe softhca
rp_all=$(sysctl -n net.ipv4.conf.all.rp_filter)
t two_devices two_devices
t modules modules
t target_up target_up
t connect connect
t big_blocks big_blocks
t fio_randwrite_verify fio_verify
t fio_on_a_rough_wire rough_fio
t dd_on_a_rough_wire rough_dd
t disconnect disconnect
t connect_reconnect_delay_5 connect --ctrl-loss-tmo=60 --reconnect-delay=5
t target_device_deleted_under_fio target_gone_and_back
t disconnect_after_target_back disconnect
t reconnect connect --ctrl-loss-tmo=5 --reconnect-delay=1
t delete_device_under_fio delete_under_fio
nvme disconnect -n $NQN > /dev/null 2>&1
target_down
modprobe -r nvme-rdma nvmet-rdma nvmet 2>/dev/null
rm -rf "$TMP"
echo Y > /sys/module/softhca/parameters/same_host 2>/dev/null
cleanup_all
sysctl -qw net.ipv4.conf.all.rp_filter="$rp_all"
tap_done
