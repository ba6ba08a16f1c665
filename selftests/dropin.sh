#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Debian's unmodified libibverbs programs on softhca, through the drop-in
# libibverbs.so.1 that softhca-run puts first on LD_LIBRARY_PATH:
# ibv_devices, ibv_devinfo, the ibv_*_pingpong tools between sh0 and sh1
# (sh0 serves, sh1 connects over TCP on localhost, GID index 0), a
# program linking libmlx5 and libefa (perftest), and dropin_query, a
# libibverbs program reaching the extended and private calls.  Every
# program runs under timeout: a hang fails its point instead of the run.
. "$(dirname "$0")/lib.sh"

RUN=$REPO/tools/softhca-run
TMP=$(mktemp -d)
T=60		# seconds any one program may take

modprobe ib_uverbs
modprobe softhca
softhca_on_veth 2
DROPIN=$("$RUN" --libdir)/libibverbs.so.1

# guid DEV: node_guid from sysfs as ibv_devices prints it (hex, no colons)
guid() { tr -d ':\n' < "/sys/class/infiniband/$1/node_guid"; }

# has TEXT FILE: FILE holds the line part TEXT, else show FILE.
has() {
	grep -qF -- "$1" "$2" && return 0
	echo "missing: $1"
	cat "$2"
	return 1
}

devices_listed() {
	timeout $T "$RUN" ibv_devices > "$TMP/devices" 2>&1 || { cat "$TMP/devices"; return 1; }
	for d in sh0 sh1; do
		grep -qE "^[[:space:]]+$d[[:space:]]+$(guid $d)\$" "$TMP/devices" ||
			{ echo "$d $(guid $d) not listed"; cat "$TMP/devices"; return 1; }
	done
	return 0
}

devinfo_fields() {
	timeout $T "$RUN" ibv_devinfo -d sh0 > "$TMP/devinfo" 2>&1 || { cat "$TMP/devinfo"; return 1; }
	has "hca_id:	sh0" "$TMP/devinfo" &&
	has "transport:			InfiniBand (0)" "$TMP/devinfo" &&
	has "fw_ver:				$(cat /sys/class/infiniband/sh0/fw_ver)" "$TMP/devinfo" &&
	has "node_guid:			$(cat /sys/class/infiniband/sh0/node_guid)" "$TMP/devinfo" &&
	has "phys_port_cnt:			1" "$TMP/devinfo" &&
	has "port:	1" "$TMP/devinfo" &&
	has "state:			PORT_ACTIVE (4)" "$TMP/devinfo" &&
	has "link_layer:		Ethernet" "$TMP/devinfo" || return 1
	has "active_mtu:		1024 (3)" "$TMP/devinfo" || return 1
	[ "$(grep -cE '^[[:space:]]+port:' "$TMP/devinfo")" = 1 ] ||
		{ echo "not one port"; cat "$TMP/devinfo"; return 1; }
}

# ibv_devinfo -v: the GID table (ibv_query_gid_table), each entry with its
# type as sysfs has it.
devinfo_gids() {
	timeout $T "$RUN" ibv_devinfo -v -d sh0 > "$TMP/devinfo-v" 2>&1 || { cat "$TMP/devinfo-v"; return 1; }
	n=0
	for f in /sys/class/infiniband/sh0/ports/1/gid_attrs/types/*; do
		i=${f##*/}
		type=$(cat "$f" 2>/dev/null) || continue
		case $type in
		"RoCE v2") want="RoCE v2" ;;
		*) want="RoCE v1" ;;
		esac
		grep -E "GID\[ *$i\]:" "$TMP/devinfo-v" | grep -qF "$want" ||
			{ echo "GID $i ($type) not shown as $want"; cat "$TMP/devinfo-v"; return 1; }
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "no GID entries in sysfs"; return 1; }
	echo "NOTE: ibv_devinfo -v shows the $n GID entries of sh0 with their types"
}

# listening PORT: a TCP socket listens on PORT.
listening() {
	hex=$(printf '%04X' "$1")
	awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# serve PORT LOG CMD...: CMD under softhca-run and the timeout, in the
# background with its output in LOG, until it listens on PORT; $srv is
# its pid.
serve() {
	sport=$1 slog=$2
	shift 2
	timeout $T "$RUN" "$@" > "$slog" 2>&1 &
	srv=$!
	wait_for 20 listening "$sport" && return 0
	kill $srv 2>/dev/null
	wait $srv
	echo "$1 never listened on $sport"
	cat "$slog"
	return 1
}

# pingpong PROG PORT ARGS...: PROG serves on sh0, then connects from sh1.
# Exit 124 from either side means it hung (timeout ended it).
pingpong() {
	prog=$1 port=$2
	shift 2
	serve "$port" "$TMP/$prog.srv" "$prog" -d sh0 -g 0 -p "$port" "$@" || return 1
	timeout $T "$RUN" "$prog" -d sh1 -g 0 -p "$port" "$@" localhost > "$TMP/$prog.cli" 2>&1
	crc=$?
	wait $srv
	src=$?
	if [ $src != 0 ] || [ $crc != 0 ]; then
		echo "$prog: server exit $src, client exit $crc"
		echo "--- server"; cat "$TMP/$prog.srv"
		echo "--- client"; cat "$TMP/$prog.cli"
		[ $src = 124 ] || [ $crc = 124 ] && return 124
		return 1
	fi
	has "bytes in" "$TMP/$prog.cli" || return 1
	echo "NOTE: $prog: $(grep 'bytes in' "$TMP/$prog.cli" | head -1)"
}

# XRC: one server for two clients, each client with its own process.
xsrq() {
	port=18606
	serve $port "$TMP/xsrq.srv" ibv_xsrq_pingpong -d sh0 -g 0 -p $port -m 1024 -c 2 || return 1
	timeout $T "$RUN" ibv_xsrq_pingpong -d sh1 -g 0 -p $port -m 1024 localhost > "$TMP/xsrq.cli1" 2>&1 &
	c1=$!
	timeout $T "$RUN" ibv_xsrq_pingpong -d sh1 -g 0 -p $port -m 1024 localhost > "$TMP/xsrq.cli2" 2>&1
	r2=$?
	wait $c1
	r1=$?
	wait $srv
	rs=$?
	if [ $rs != 0 ] || [ $r1 != 0 ] || [ $r2 != 0 ]; then
		for f in srv cli1 cli2; do echo "--- $f"; cat "$TMP/xsrq.$f"; done
		[ $rs = 124 ] || [ $r1 = 124 ] || [ $r2 = 124 ] && echo "hung (timeout)"
		echo "server exit $rs, clients $r1 $r2"
		return 1
	fi
	return 0
}

# perftest links libmlx5 and libefa: their constructors register with the
# drop-in's provider interface, then it runs on softhca.
provider_libs_start() {
	command -v ib_send_lat > /dev/null || { echo "SKIP: perftest not installed"; return 77; }
	ldd "$(command -v ib_send_lat)" | grep -q libmlx5 || { echo "ib_send_lat does not link libmlx5"; return 1; }
	LD_BIND_NOW=1 timeout $T "$RUN" ib_send_lat --help > "$TMP/perf" 2>&1
	has "Usage:" "$TMP/perf"
}

perftest_send_lat() {
	command -v ib_send_lat > /dev/null || { echo "SKIP: perftest not installed"; return 77; }
	port=18607
	serve $port "$TMP/lat.srv" ib_send_lat -d sh0 -x 0 -p $port -n 200 || return 1
	timeout $T "$RUN" ib_send_lat -d sh1 -x 0 -p $port -n 200 localhost > "$TMP/lat.cli" 2>&1
	crc=$?
	wait $srv
	src=$?
	if [ $src != 0 ] || [ $crc != 0 ]; then
		echo "server exit $src, client exit $crc"
		echo "--- server"; cat "$TMP/lat.srv"; echo "--- client"; cat "$TMP/lat.cli"
		return 1
	fi
	echo "NOTE: ib_send_lat: $(grep -E '^ *2 +200' "$TMP/lat.cli" | tr -s ' ')"
}

query() {
	timeout $T "$RUN" env DROPIN_LIB="$DROPIN" SOFTHCA_DEV=sh0 "$@" \
		"$SELFTESTS/dropin_query" > "$TMP/query" 2>&1
	rc=$?
	sed -n 's/^NOTE: /NOTE: /p' "$TMP/query"
	[ $rc = 0 ] || cat "$TMP/query"
	return $rc
}

t "ibv_devices lists sh0 and sh1 with their node GUIDs" devices_listed
t "ibv_devinfo -d sh0: hca_id, transport, fw_ver, node_guid, one port, PORT_ACTIVE, Ethernet" devinfo_fields
t "ibv_devinfo -v -d sh0: every GID entry with its RoCE type" devinfo_gids
t "ibv_rc_pingpong sh0 <-> sh1" pingpong ibv_rc_pingpong 18601 -n 100
t "ibv_uc_pingpong sh0 <-> sh1" pingpong ibv_uc_pingpong 18602 -n 100
t "ibv_ud_pingpong sh0 <-> sh1" pingpong ibv_ud_pingpong 18603 -n 100 -s 512
t "ibv_srq_pingpong sh0 <-> sh1" pingpong ibv_srq_pingpong 18604 -n 100
t "ibv_rc_pingpong with completion events" pingpong ibv_rc_pingpong 18605 -n 100 -e
t "ibv_xsrq_pingpong: one server (-c 2), two clients" xsrq
t "a program linking libmlx5 and libefa starts (ib_send_lat --help)" provider_libs_start
t "perftest ib_send_lat sh0 <-> sh1" perftest_send_lat
t "libibverbs program: query_device_ex, GID types, sysfs, fork status" query
t "the same with RDMAV_USE_MADVISE=1: MR pages kept from children" query RDMAV_USE_MADVISE=1

rm -rf "$TMP"
cleanup_all
tap_done
