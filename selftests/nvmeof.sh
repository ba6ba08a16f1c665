#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# NVMe over Fabrics on softhca: Debian's nvmet/nvmet-rdma (the target)
# and nvme-rdma (the host), unmodified kernel ULPs that need fast
# registration (drivers/softhca/fastreg.c): the host registers every
# I/O's pages with REG_MR, the target moves the data with RDMA READ and
# WRITE on those rkeys and answers with SEND_WITH_INV, or the host
# invalidates with LOCAL_INV.  fio writes random 4 KiB blocks with
# checksums, then reads every one back and verifies it.
#
# One device: nvmet-rdma and nvme-rdma both open their cm_ids in the
# initial network namespace, where rdma_cm resolves the target's address
# to the device that owns it (sh0) whatever the source (rdma_cm.sh), so
# host and target QPs are on sh0, as on one HCA of a real host.  (A
# host bound to a second device's address, nvme connect -w, fails its
# connect with ECONNRESET there: its cm_id is on the other device.)
#
# Sizes: a 512 MiB namespace (a sparse file on the guest's tmpfs), of
# which fio writes and verifies all: 4 jobs x 128 MiB at iodepth 16 on
# 2 I/O queues (one a vCPU of the guest).  Under TCG that took about
# 80 s (about 3,500 write and 5,000 read IOPS), within the 2 minutes the
# test may take; the rest of the test takes about 40 s.
#
# Then sh0 is deleted while fio runs: the host sees its queues fail and
# tries to reconnect (ctrl_loss_tmo 5 s), I/O ends in errors, nothing
# hangs; any splat fails the run in the harness.
. "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d)
A=10.9.0.1	# sv0, sh0: the target's port
NQN=nqn.2026-11.org.softhca:nvmeof-test
HOSTNQN=nqn.2026-11.org.softhca:nvmeof-host
CFS=/sys/kernel/config/nvmet
JOBS=4
# A tenth on the debug kernel (lib.sh: scaled), several times slower.
JOBSIZE=$(scaled 128)M

need() {
	command -v "$1" > /dev/null ||
		{ echo "SKIP: $1 not installed (tools/setup-deps: nvme-cli fio)"; return 77; }
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
	truncate -s 512M "$TMP/ns.img" || return 1
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

# connect [OPTIONS]: nvme-rdma to the target, 4 I/O queues; the
# namespace's device must appear.
connect() {
	need nvme || return 77
	timeout 60 nvme connect -t rdma -a $A -s 4420 -n $NQN -q $HOSTNQN -i 2 "$@" \
		> "$TMP/connect" 2>&1 || { cat "$TMP/connect"; dmesg | tail -20; return 1; }
	wait_for 20 nsdev || { echo "no namespace device"; dmesg | tail -20; return 1; }
	c=$(grep -l "$NQN" /sys/class/nvme/nvme*/subsysnqn | head -1)
	c=${c%/subsysnqn}
	[ "$(cat "$c/transport")" = rdma ] || { echo "transport $(cat "$c/transport")"; return 1; }
	echo "NOTE: $(nsdev) through $(cat "$c/address"), $(dmesg | grep -oE 'creating [0-9]+ I/O queues' | tail -1)"
}

# fio_verify: random 4 KiB writes over JOBS x JOBSIZE with crc32c
# headers, then every block read back and checked (verify_fatal: the
# first bad block fails).
fio_verify() {
	need fio || return 77
	dev=$(nsdev) || { echo "no namespace device"; return 1; }
	t0=$(date +%s)
	timeout 300 fio --name=nvmeof --filename="$dev" --direct=1 \
		--ioengine=libaio --rw=randwrite --bs=4k --iodepth=16 \
		--numjobs=$JOBS --size=$JOBSIZE --offset_increment=$JOBSIZE \
		--verify=crc32c --do_verify=1 --verify_fatal=1 \
		--verify_state_save=0 \
		--group_reporting > "$TMP/fio" 2>&1
	rc=$?
	no_shm "$TMP/fio" && return 77
	[ $rc = 0 ] || { echo "fio exit $rc"; tail -30 "$TMP/fio"; dmesg | tail -20; return 1; }
	grep -q "err= 0" "$TMP/fio" || { cat "$TMP/fio"; return 1; }
	echo "NOTE: $JOBS x $JOBSIZE written and verified in $(( $(date +%s) - t0 )) s"
	grep -E "^ +(write|read): IOPS" "$TMP/fio" | sed 's/^ */NOTE: /'
}

# fio keeps its job table in SysV shm, even with --thread; the debug
# kernel has none: the fio points skip there, saying so.
no_shm() {
	grep -q "failed to setup shm segment" "$1" || return 1
	echo "SKIP: fio needs SysV shm, which this kernel lacks"
}

disconnect() {
	timeout 60 nvme disconnect -n $NQN > "$TMP/disc" 2>&1 || { cat "$TMP/disc"; return 1; }
	grep -q "disconnected 1 controller" "$TMP/disc" || { cat "$TMP/disc"; return 1; }
	wait_for 10 sh -c '! ls /sys/block/nvme* > /dev/null 2>&1'
}

# sh0 goes while fio writes: fio ends (I/O errors once the host gives up
# reconnecting), the link delete returns, no hang.
delete_under_fio() {
	need fio || return 77
	dev=$(nsdev) || { echo "no namespace device"; return 1; }
	timeout 120 fio --name=nvmeof-del --filename="$dev" --direct=1 \
		--ioengine=libaio --rw=randwrite --bs=4k --iodepth=16 \
		--numjobs=2 --size=$JOBSIZE --time_based --runtime=100 \
		> "$TMP/fio-del" 2>&1 &
	fpid=$!
	sleep 5
	no_shm "$TMP/fio-del" && return 77
	kill -0 $fpid 2>/dev/null || { echo "fio ended early"; cat "$TMP/fio-del"; return 1; }
	timeout 60 rdma link delete sh0 || { echo "link delete failed or hung"; return 1; }
	wait $fpid
	frc=$?
	[ $frc != 124 ] || { echo "fio hung"; dmesg | tail -30; return 1; }
	! dev_exists sh0 || { echo "sh0 still there"; return 1; }
	# fio saw its I/O fail (EIO), or the host logged a reconnect attempt.
	grep -qE "err= *5/" "$TMP/fio-del" ||
		dmesg | grep -qE "nvme nvme[0-9]+: Reconnecting" ||
		{ echo "no I/O error, no reconnect attempt"; dmesg | tail -30; return 1; }
	# The host gives up after ctrl_loss_tmo and removes the controller.
	wait_for 30 sh -c '! ls /sys/block/nvme* > /dev/null 2>&1' ||
		{ echo "the controller stayed"; dmesg | tail -30; return 1; }
	echo "NOTE: fio exit $frc: $(grep -m1 -oE 'err=[ 0-9]+/[^,]*' "$TMP/fio-del")"
	dmesg | grep nvme | tail -6 | sed 's/^/NOTE: /'
}

modprobe softhca
softhca_on_veth 1
ip addr add $A/24 dev sv0
t modules modules
t target_up target_up
t connect connect
t fio_randwrite_verify fio_verify
t disconnect disconnect
t reconnect connect --ctrl-loss-tmo=5 --reconnect-delay=1
t delete_device_under_fio delete_under_fio
nvme disconnect -n $NQN > /dev/null 2>&1
target_down
modprobe -r nvme-rdma nvmet-rdma nvmet 2>/dev/null
rm -rf "$TMP"
cleanup_all
tap_done
