#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# rdma_cm between two devices, over RoCEv2 on a veth (wire_lib.sh's
# topology): the CM's MADs go from one device's GSI QP (QP1) to the
# other's as UD packets on the wire, then the connected QPs talk RC or
# UD on the wire.  softhca <-> softhca across two namespaces (shw2 in
# wns2, shw3 in wns3) and softhca <-> rdma_rxe both ways (rxe0 in the
# initial namespace, shw1 in wns1), with Debian's unmodified
# rdmacm-utils: ucmatose (RC SENDs), udaddy (UD), rdma_server and
# rdma_client, rping -V (RDMA READ and WRITE, the data checked).
# Programs on softhca run under softhca-run.
# Each point checks that QP1 of the softhca devices involved sent and
# received packets on the wire (hw_counters), so that the CM exchange
# is known to have crossed it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire_lib.sh"

modprobe rdma_ucm

need() {
	command -v "$1" > /dev/null ||
		{ echo "SKIP: $1 not installed (tools/setup-deps: rdmacm-utils)"; return 77; }
}

# A cm_id of some process listens (ib_core's resource tracking lists
# every namespace's).
cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep -q 'state LISTEN'
}

# cm NAME SNS SDEV CNS CDEV SERVER-CMD... -- CLIENT-CMD...: the server in
# namespace SNS (on device SDEV), the client in CNS (on CDEV) once the
# server listens; both must exit 0 and print "return status 0" (the
# rdmacm-utils' verdict) or, for rdma_server/rdma_client, "end 0"; the
# softhca devices among SDEV and CDEV must have sent and received
# packets meanwhile.
cm() {
	name=$1 sns=$2 sdev=$3 cns=$4 cdev=$5
	shift 5
	need "$1" || return 77
	for d in $sdev $cdev; do
		case $d in rxe*) [ -z "$rxe_why" ] || { echo "SKIP: $rxe_why"; return 77; } ;; esac
	done
	srv=""
	while [ "$1" != -- ]; do srv="$srv $1"; shift; done
	shift
	tx0=$(for d in $sdev $cdev; do case $d in shw*) hwc "$d" tx_packets ;; esac; done)
	rx0=$(for d in $sdev $cdev; do case $d in shw*) hwc "$d" rx_packets ;; esac; done)
	# shellcheck disable=SC2046,SC2086
	inns "$sns" timeout "$T" $(wrap "$sdev") $srv > "$TMP/$name.srv" 2>&1 &
	spid=$!
	wait_for 20 cm_listening > /dev/null ||
		{ echo "the server did not listen"; kill $spid; wait $spid; cat "$TMP/$name.srv"; return 1; }
	# shellcheck disable=SC2046
	inns "$cns" timeout "$T" $(wrap "$cdev") "$@" > "$TMP/$name.cli" 2>&1
	crc=$?
	wait $spid
	src=$?
	ok="return status 0"
	case $srv in
	*rdma_server*) ok="end 0" ;;
	*rping*) ok="ping data" ;;	# -v: each ping's data (-V checked it)
	esac
	if [ $crc != 0 ] || [ $src != 0 ] || ! grep -q "$ok" "$TMP/$name.cli" ||
	   ! grep -q "$ok" "$TMP/$name.srv"; then
		echo "client exit $crc, server exit $src"
		sed 's/^/client: /' "$TMP/$name.cli" | tail -15
		sed 's/^/server: /' "$TMP/$name.srv" | tail -15
		return 1
	fi
	tx1=$(for d in $sdev $cdev; do case $d in shw*) hwc "$d" tx_packets ;; esac; done)
	rx1=$(for d in $sdev $cdev; do case $d in shw*) hwc "$d" rx_packets ;; esac; done)
	# One line per softhca device: each counter must have grown.
	printf '%s\n' "$tx0" > "$TMP/a"; printf '%s\n' "$tx1" > "$TMP/b"
	printf '%s\n' "$rx0" > "$TMP/c"; printf '%s\n' "$rx1" > "$TMP/d"
	paste "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/d" |
		awk '$2 <= $1 || $4 <= $3 { bad = 1 } END { exit bad }' ||
		{ echo "a softhca device sent or received nothing: tx $tx0 -> $tx1, rx $rx0 -> $rx1"; return 1; }
	echo "NOTE: $name: softhca tx packets $(echo $tx0) -> $(echo $tx1)"
}

t "rdma_cm wire: veths in namespaces, softhca and rxe devices on them" setup
t "rdma_cm wire: ucmatose softhca <-> softhca (RC, two namespaces)" \
	cm ucm_sh_sh wns2 shw2 wns3 shw3 ucmatose -b 10.78.0.1 -c 2 -C 20 -- \
		ucmatose -s 10.78.0.1 -c 2 -C 20
t "rdma_cm wire: udaddy softhca <-> softhca (UD)" \
	cm ud_sh_sh wns2 shw2 wns3 shw3 udaddy -b 10.78.0.1 -c 2 -C 20 -- \
		udaddy -s 10.78.0.1 -c 2 -C 20
t "rdma_cm wire: rdma_server/rdma_client softhca <-> softhca" \
	cm rs_sh_sh wns2 shw2 wns3 shw3 rdma_server -s 10.78.0.1 -p 7472 -- \
		rdma_client -s 10.78.0.1 -p 7472
t "rdma_cm wire: ucmatose rxe server, softhca client" \
	cm ucm_rxe_sh - rxe0 wns1 shw1 ucmatose -b 10.77.0.1 -c 2 -C 20 -- \
		ucmatose -s 10.77.0.1 -c 2 -C 20
t "rdma_cm wire: ucmatose softhca server, rxe client" \
	cm ucm_sh_rxe wns1 shw1 - rxe0 ucmatose -b 10.77.0.2 -c 2 -C 20 -- \
		ucmatose -s 10.77.0.2 -c 2 -C 20
t "rdma_cm wire: udaddy rxe server, softhca client" \
	cm ud_rxe_sh - rxe0 wns1 shw1 udaddy -b 10.77.0.1 -c 2 -C 20 -- \
		udaddy -s 10.77.0.1 -c 2 -C 20
t "rdma_cm wire: udaddy softhca server, rxe client" \
	cm ud_sh_rxe wns1 shw1 - rxe0 udaddy -b 10.77.0.2 -c 2 -C 20 -- \
		udaddy -s 10.77.0.2 -c 2 -C 20
t "rdma_cm wire: rping -C 20 -V softhca <-> softhca (RDMA READ, two namespaces)" \
	cm rp_sh_sh wns2 shw2 wns3 shw3 rping -s -a 10.78.0.1 -C 20 -V -v -- \
		rping -c -a 10.78.0.1 -C 20 -V -v
t "rdma_cm wire: rping -C 20 -V rxe server, softhca client" \
	cm rp_rxe_sh - rxe0 wns1 shw1 rping -s -a 10.77.0.1 -C 20 -V -v -- \
		rping -c -a 10.77.0.1 -C 20 -V -v
t "rdma_cm wire: rping -C 20 -V softhca server, rxe client" \
	cm rp_sh_rxe wns1 shw1 - rxe0 rping -s -a 10.77.0.2 -C 20 -V -v -- \
		rping -c -a 10.77.0.2 -C 20 -V -v
t "rdma_cm wire: no process object left on the softhca devices" \
	no_user_objects shw1 shw2 shw3
teardown
t "rdma_cm wire: deleting the namespaces takes their devices" sockets_gone
cleanup_all
rm -rf "$TMP"
tap_done
