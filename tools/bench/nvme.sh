#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs inside the guest: the NVMe over Fabrics rows of make bench
# (guest.sh calls it after the wire rows; alone:
# tools/vm/run-guest -- sh tools/bench/nvme.sh OUT).  Appends one JSON
# object per result to $1, case names nvme_*.
#
# The same set-up on softhca and on rdma_rxe, one after the other:
# Debian's nvmet with an nvmet-rdma port on the device's address, a
# null_blk namespace (no data kept, completions inline: what is measured
# is the fabric, not a backing store), and nvme-rdma connected to it with
# one I/O queue per vCPU.  Kernel rdma_cm users live in the initial
# namespace, where the target's address resolves to the device owning
# it, so host and target QPs are on one device (shn0 or rxn0), as in
# selftests/nvmeof.sh.
#
# fio, libaio, O_DIRECT, time-based runs of NVME_SECS (default 10) s:
#   nvme_randread_4k   4 KiB random reads, queue depth 32 (IOPS)
#   nvme_seqread_128k  128 KiB sequential reads, queue depth 16 (MiB/s)
# CPU per I/O: the busy time of every vCPU (/proc/stat: all but idle and
# iowait) over the run divided by the I/Os.  It counts fio, the host's
# and the target's kernel work and softhca's pollers or rxe's workers
# alike.
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib.sh
out=${1:-build/bench/nvme.jsonl}
mkdir -p build/bench
secs=${NVME_SECS:-10}
NQN=nqn.2026-11.org.softhca:bench
CFS=/sys/kernel/config/nvmet
nfailed=0

for c in nvme fio; do
	command -v $c > /dev/null ||
		{ echo "bench nvme: $c not installed (tools/setup-deps)" >&2; exit 1; }
done
for m in ib_uverbs softhca rdma_rxe nvmet nvmet-rdma nvme-rdma; do
	modprobe $m || { echo "bench nvme: module $m does not load" >&2; exit 1; }
done
modprobe null_blk nr_devices=1 gb=1 irqmode=0 ||
	{ echo "bench nvme: null_blk does not load" >&2; exit 1; }
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config

# busy: jiffies every CPU spent on anything but idle and iowait.
busy() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}

# The namespace's block device once the host has it: the multipath
# head nvmeXn1 (its hidden paths are nvmeXcYn1).
nsdev() {
	d=$(ls /sys/block | grep -m1 -E '^nvme[0-9]+n1$') && echo "/dev/$d"
}

# target ADDR: the subsystem on null_blk, port 1 on ADDR.
target() {
	mkdir -p "$CFS/subsystems/$NQN/namespaces/1" &&
	echo 1 > "$CFS/subsystems/$NQN/attr_allow_any_host" &&
	echo /dev/nullb0 > "$CFS/subsystems/$NQN/namespaces/1/device_path" &&
	echo 1 > "$CFS/subsystems/$NQN/namespaces/1/enable" &&
	mkdir -p "$CFS/ports/1" &&
	echo rdma > "$CFS/ports/1/addr_trtype" &&
	echo ipv4 > "$CFS/ports/1/addr_adrfam" &&
	echo "$1" > "$CFS/ports/1/addr_traddr" &&
	echo 4420 > "$CFS/ports/1/addr_trsvcid" &&
	ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
}

untarget() {
	rm -f "$CFS/ports/1/subsystems/$NQN"
	rmdir "$CFS/ports/1" 2>/dev/null
	echo 0 > "$CFS/subsystems/$NQN/namespaces/1/enable" 2>/dev/null
	rmdir "$CFS/subsystems/$NQN/namespaces/1" "$CFS/subsystems/$NQN" 2>/dev/null
	true
}

# run CASE SIDE BYTES FIO-ARGS...: one time-based fio job of BYTES
# blocks on the namespace, its result as one JSON object.
run() {
	rcase=$1 rside=$2 bytes=$3
	shift 3
	echo "# $rcase $rside: fio --bs=$bytes $*" >&2
	b0=$(busy)
	if ! timeout $((secs + 60)) fio --name="$rcase" --filename="$dev" \
		--direct=1 --ioengine=libaio --time_based --runtime="$secs" \
		--bs="$bytes" --output-format=json "$@" > build/bench/fio.json; then
		echo "bench nvme: $rcase on $rside failed" >&2
		nfailed=$((nfailed + 1))
		return
	fi
	b1=$(busy)
	python3 - "$rcase" "$rside" "$bytes" $((b1 - b0)) "$(getconf CLK_TCK)" \
		build/bench/fio.json >> "$out" <<'PY'
import json, sys
name, side, size, ticks, hz, path = sys.argv[1:7]
r = json.load(open(path))["jobs"][0]["read"]
ios = r["total_ios"]
print(json.dumps({
    "case": name, "device": side, "test": "fio", "bytes": int(size),
    "iops": r["iops"], "bw_mib_s": r["bw_bytes"] / 2**20,
    "lat_mean_us": r["lat_ns"]["mean"] / 1000,
    "cpu_us_per_io": int(ticks) * 1e6 / int(hz) / ios if ios else None,
}))
PY
}

# side NAME DEV NETDEV PEER ADDR TYPE: the device on a fresh veth, the
# target on ADDR, the host connected, both runs, all undone.
side() {
	sname=$1 ibdev=$2 ndev=$3 peer=$4 addr=$5 type=$6
	veth_up "$ndev" "$peer" && ip addr add "$addr/24" dev "$ndev" &&
	rdma link add "$ibdev" type "$type" netdev "$ndev" ||
		{ echo "bench nvme: $ibdev on $ndev failed" >&2; nfailed=$((nfailed + 1)); return; }
	if target "$addr" &&
	   timeout 60 nvme connect -t rdma -a "$addr" -s 4420 -n $NQN -i "$(nproc)" \
		> build/bench/connect.out 2>&1 && wait_for 20 nsdev; then
		dev=$(nsdev)
		echo "# $sname: $dev through $ibdev ($addr)" >&2
		run nvme_randread_4k "$sname" 4096 --rw=randread --iodepth=32
		run nvme_seqread_128k "$sname" 131072 --rw=read --iodepth=16
	else
		echo "bench nvme: target or connect on $ibdev failed" >&2
		cat build/bench/connect.out >&2
		dmesg | tail -10 >&2
		nfailed=$((nfailed + 1))
	fi
	timeout 60 nvme disconnect -n $NQN > /dev/null 2>&1
	wait_for 10 sh -c '! ls /sys/block/nvme* > /dev/null 2>&1'
	untarget
	rdma link delete "$ibdev"
	ip link delete "$ndev"
}

# Names of their own: guest.sh's devices and veths are still there.
side softhca shn0 nvs0 nvs1 10.9.5.1 softhca
side rxe rxn0 nvr0 nvr1 10.9.6.1 rxe
rm -f build/bench/fio.json build/bench/connect.out
echo "# bench nvme: $nfailed runs failed" >&2
[ $nfailed = 0 ]
