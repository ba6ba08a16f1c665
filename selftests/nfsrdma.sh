#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# NFS over RDMA on softhca: Debian's unmodified nfsd with its RDMA
# listener (svcrdma) and NFS client (xprtrdma), both in the rpcrdma
# module, kernel ULPs that post from their completion handlers and move
# file data with RDMA READ and WRITE on registered chunks.
#
# The server exports a directory of the guest's tmpfs over NFSv4 only
# (no rpcbind: a v4 server registers with it optionally), listens for
# RDMA on 20049 on the device's address, and the client mounts it with
# proto=rdma.  As with NVMe over Fabrics (nvmeof.sh), kernel rdma_cm
# users live in the initial namespace, where the server's address
# resolves to the device owning it: client and server QPs are on one
# device.  64 MiB of random data is written with fsync, the client's
# cache dropped, the file read back through NFS and compared, and the
# server's copy too.  Then the same on rdma_rxe beside it, and both
# mounts and the server go away, leaving no QP on the devices.
#
# The NFSv4 grace period (90 s by default, during which the server
# refuses OPENs) is 10 s here: without nfsdcld there is no client
# record to recover, and the test would wait it out.
. "$(dirname "$0")/lib.sh"

TMP=$(mktemp -d)
A=10.9.8.1	# sv0, sh0
B=10.9.9.1	# rv0, rxe0
EXP=$TMP/export
MB=$(scaled 64)

need() {
	for c in rpc.nfsd rpc.mountd exportfs mount.nfs4; do
		command -v $c > /dev/null ||
			{ echo "SKIP: $c not installed (tools/setup-deps: nfs-kernel-server)"; return 77; }
	done
	for m in nfsd rpcrdma; do
		modprobe $m 2> /dev/null || { echo "SKIP: no module $m in this kernel"; return 77; }
	done
}

# server: nfsd for NFSv4 with 4 threads, TCP and RDMA listeners.
server() {
	need || return 77
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd || return 1
	mkdir -p "$EXP" /var/lib/nfs/v4recovery
	echo "$EXP *(rw,no_root_squash,insecure,fsid=0,no_subtree_check,sync)" > /etc/exports
	exportfs -ra || return 1
	rpc.mountd -N 3 || { echo "rpc.mountd failed"; return 1; }
	echo 15 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	rpc.nfsd -N 3 -U 4 || { echo "rpc.nfsd failed"; return 1; }
	echo "rdma 20049" > /proc/fs/nfsd/portlist || return 1
	grep -q "^rdma 20049" /proc/fs/nfsd/portlist ||
		{ cat /proc/fs/nfsd/portlist; return 1; }
	echo "NOTE: nfsd $(cat /proc/fs/nfsd/versions), $(cat /proc/fs/nfsd/threads) threads, listening on $(grep -c . /proc/fs/nfsd/portlist) ports"
	touch "$TMP/up"
}

# up: the points after the server's need it.
up() {
	[ -f "$TMP/up" ] || { echo "SKIP: no NFS server (see the first point)"; return 77; }
}

# qps DEV: the RC QPs restrack lists on DEV.
qps() {
	rdma resource show qp link "$1/1" 2>/dev/null | grep -c 'type RC'
}

# mount_rdma ADDR DEV DIR: NFSv4 over RDMA from ADDR (DEV's) at DIR; the
# mount must say proto=rdma and DEV must carry RC QPs for it.
mount_rdma() {
	up || return 77
	mkdir -p "$3"
	timeout 90 mount -t nfs4 -o proto=rdma,port=20049 "$1:/" "$3" ||
		{ dmesg | tail -20; return 1; }
	grep " $3 nfs4 " /proc/mounts | grep -q "proto=rdma" ||
		{ grep " $3 " /proc/mounts; return 1; }
	n=$(qps "$2")
	[ "$n" -ge 2 ] || { echo "$2 has $n RC QPs (client and server: 2 or more)"; return 1; }
	echo "NOTE: $3: $(grep " $3 " /proc/mounts | grep -oE 'vers=[^,]*,rsize=[^,]*'), $n RC QPs on $2"
}

# data DIR NAME: $MB MiB of random data through the mount at DIR,
# fsynced, read back with a cold client cache, compared; the server's
# file compared too.
data() {
	up || return 77
	f=$1/$2
	t0=$(date +%s%N)
	timeout 300 dd if="$TMP/src" of="$f" bs=1M conv=fsync 2> "$TMP/dd" ||
		{ cat "$TMP/dd"; return 1; }
	t1=$(date +%s%N)
	echo 3 > /proc/sys/vm/drop_caches
	timeout 300 cmp "$TMP/src" "$f" || { echo "read back through NFS differs"; return 1; }
	t2=$(date +%s%N)
	cmp "$TMP/src" "$EXP/$2" || { echo "the server's file differs"; return 1; }
	# The transport's own count of what it moved (mountstats' xprt line).
	xprt=$(awk -v m=" $1 " 'index($0, m) { on = 1 } on && /xprt:/ { print; exit }' /proc/self/mountstats)
	case $xprt in
	*rdma*) ;;
	*) echo "mountstats has no rdma transport: $xprt"; return 1 ;;
	esac
	echo "NOTE: $MB MiB written (fsync) in $(( (t1 - t0) / 1000000 )) ms, read back in $(( (t2 - t1) / 1000000 )) ms"
}

unmount() {
	up || return 77
	umount "$1" || return 1
	! grep -q " $1 " /proc/mounts
}

# stop: the server goes; its QPs with it, on both devices.
stop() {
	up || return 77
	rpc.nfsd 0 || return 1
	exportfs -ua
	pkill -x rpc.mountd
	wait_for 20 sh -c "[ \$(rdma resource show qp link sh0/1 2>/dev/null | grep -c 'type RC') = 0 ]" ||
		{ rdma resource show qp link sh0/1; return 1; }
	wait_for 20 sh -c "[ \$(rdma resource show qp link rxe0/1 2>/dev/null | grep -c 'type RC') = 0 ]" ||
		{ rdma resource show qp link rxe0/1; return 1; }
}

# rdma_rxe first: it binds UDP 4791 in the initial namespace when it
# loads, and fails to load if softhca has it (net.c); softhca's devices
# here need no socket (host and server are on one device).
rxe=0
if modprobe rdma_rxe 2> /dev/null && veth_up rv0 rv1 &&
   ip addr add $B/24 dev rv0 && rdma link add rxe0 type rxe netdev rv0; then
	rxe=1
fi
modprobe softhca
softhca_on_veth 1
ip addr add $A/24 dev sv0
head -c $((MB * 1048576)) /dev/urandom > "$TMP/src"

t "nfsrdma: nfsd serves NFSv4 on an RDMA listener" server
t "nfsrdma: mount -o proto=rdma over softhca" mount_rdma $A sh0 "$TMP/m_sh"
t "nfsrdma: $MB MiB written and read back over softhca, every byte" data "$TMP/m_sh" f_sh
t "nfsrdma: unmount (softhca)" unmount "$TMP/m_sh"
if [ $rxe = 1 ]; then
	t "nfsrdma: mount -o proto=rdma over rxe" mount_rdma $B rxe0 "$TMP/m_rxe"
	t "nfsrdma: $MB MiB written and read back over rxe, every byte" data "$TMP/m_rxe" f_rxe
	t "nfsrdma: unmount (rxe)" unmount "$TMP/m_rxe"
else
	t "nfsrdma: the same over rxe" sh -c 'echo "SKIP: no rxe0 (rdma_rxe did not load or take rv0)"; exit 77'
fi
t "nfsrdma: nfsd stopped, no QP left on the devices" stop
umount /proc/fs/nfsd 2> /dev/null
modprobe -r rpcrdma nfsd 2> /dev/null
rdma link delete rxe0 2> /dev/null
ip link del rv0 2> /dev/null
modprobe -r rdma_rxe 2> /dev/null
rm -rf "$TMP"
rm -f /etc/exports
cleanup_all
tap_done
