#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# "rdma link add/delete" (iproute2) and "softhca link add/del/show":
# creation, the uverbs node, removal, and every error case leaving
# nothing half-created.
. "$(dirname "$0")/lib.sh"

count_devs() { ls /sys/class/infiniband 2>/dev/null | wc -l; }

uverbs_of() {
	for u in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$u/ibdev" 2>/dev/null)" = "$1" ] && { echo "${u##*/}"; return 0; }
	done
	return 1
}

iproute2_add_del() {
	rdma link add sh0 type softhca netdev sv0 || return 1
	dev_exists sh0 || return 1
	rdma link show sh0/1 | grep -q "netdev sv0" || { rdma link; return 1; }
	rdma dev show sh0 | grep -q "node_type ca" || return 1
	[ "$(cat /sys/class/infiniband/sh0/hca_type)" = softhca ] || return 1
	u=$(uverbs_of sh0) || { echo "no uverbs node"; return 1; }
	[ -c "/dev/infiniband/$u" ] || { echo "/dev/infiniband/$u missing"; return 1; }
	abi=$(awk '/define SOFTHCA_UVERBS_ABI_VERSION/ { print $3 }' "$REPO/uapi/rdma/softhca-abi.h")
	[ "$(cat /sys/class/infiniband_verbs/$u/abi_version)" = "$abi" ] ||
		{ echo "abi_version $(cat /sys/class/infiniband_verbs/$u/abi_version), want $abi"; rdma link delete sh0; return 1; }
	rdma link delete sh0 || return 1
	! dev_exists sh0 || { echo "still there"; return 1; }
	! uverbs_of sh0 || { echo "uverbs node left"; return 1; }
}

tool_add_show_del() {
	"$TOOL" link add sh0 netdev sv0 || return 1
	out=$("$TOOL" show) || return 1
	echo "$out"
	for want in "sh0: node_guid" "protocol roce" "port 1: state ACTIVE" \
		    "physical_state LINK_UP" "netdev sv0" "mtu 1024" \
		    "gid 0 fe80::" "RoCE v2"; do
		case "$out" in *"$want"*) ;; *) echo "show lacks '$want'"; return 1 ;; esac
	done
	"$TOOL" show sh0 >/dev/null || return 1
	"$TOOL" link del sh0 || return 1
	! dev_exists sh0
}

tool_show_ipv4_gid() {
	ip addr add 192.0.2.1/24 dev sv0
	"$TOOL" link add sh0 netdev sv0 || return 1
	wait_for 5 sh -c "'$TOOL' show sh0 | grep -q 'gid .* 192.0.2.1 RoCE v2'" || return 1
	ip addr del 192.0.2.1/24 dev sv0
	wait_for 5 sh -c "! '$TOOL' show sh0 | grep -q 192.0.2.1" || return 1
	"$TOOL" link del sh0
}

# err_case WORDS CMD...: fails, says WORDS, and leaves the device count.
err_case() {
	before=$(count_devs)
	fails_with "$@" || return 1
	[ "$(count_devs)" = "$before" ] || { echo "device count changed"; return 1; }
}

errors_tool() {
	"$TOOL" link add sh0 netdev sv0 || return 1
	err_case "File exists" "$TOOL" link add sh0 netdev sv1 || return 1
	err_case "File exists" "$TOOL" link add sh9 netdev sv0 || return 1
	err_case "No such device" "$TOOL" link add sh9 netdev nosuchif || return 1
	err_case "needs an Ethernet netdev" "$TOOL" link add sh9 netdev lo || return 1
	err_case "VLAN" "$TOOL" link add sh9 netdev sv1.5 || return 1
	err_case "Invalid argument" "$TOOL" link add 'sh%d' netdev sv1 || return 1
	err_case "No such device" "$TOOL" link del nosuchdev || return 1
	err_case "no such softhca device" "$TOOL" show nosuchdev || return 1
	"$TOOL" link del sh0 || return 1
	# Usage errors exit 2 with the usage text.
	"$TOOL" link add sh0 sv0 >/dev/null 2>&1; [ $? = 2 ] || return 1
	"$TOOL" frobnicate >/dev/null 2>&1; [ $? = 2 ] || return 1
	"$TOOL" help | grep -q "softhca link add NAME netdev IF"
}

errors_iproute2() {
	rdma link add sh0 type softhca netdev sv0 || return 1
	err_case "" rdma link add sh0 type softhca netdev sv1 || return 1
	err_case "" rdma link add sh9 type softhca netdev sv0 || return 1
	err_case "" rdma link add sh9 type softhca netdev nosuchif || return 1
	err_case "" rdma link add sh9 type softhca netdev lo || return 1
	err_case "" rdma link add sh9 type softhca netdev sv1.5 || return 1
	err_case "" rdma link delete nosuchdev || return 1
	rdma link delete sh0
}

# rdma_rxe goes again if this loaded it: it holds UDP 4791 in the
# initial namespace, which leaves softhca's devices there without RoCEv2
# (net.c) in the files after this one.
other_drivers_untouched() {
	rxe_was=$(grep -c '^rdma_rxe ' /proc/modules)
	modprobe rdma_rxe || { echo "SKIP: rdma_rxe not available"; return 77; }
	rdma link add rxe0 type rxe netdev sv1 || return 1
	"$TOOL" link add sh0 netdev sv0 || return 1
	fails_with "No such device" "$TOOL" link del rxe0 || return 1
	dev_exists rxe0 || { echo "rxe0 deleted by softhca tool"; return 1; }
	"$TOOL" show | grep -q rxe0 && { echo "show lists rxe0"; return 1; }
	# Deleting ours leaves theirs.
	"$TOOL" link del sh0 || return 1
	dev_exists rxe0 || return 1
	rdma link delete rxe0 || return 1
	[ "$rxe_was" != 0 ] || modprobe -r rdma_rxe
}

concurrent_add_same_netdev() {
	# Two racing creations on one netdev: exactly one wins.
	i=0
	while [ $i -lt 10 ]; do
		rdma link add sha type softhca netdev sv0 2>/dev/null &
		rdma link add shb type softhca netdev sv0 2>/dev/null &
		wait
		n=0
		dev_exists sha && n=$((n + 1))
		dev_exists shb && n=$((n + 1))
		[ $n = 1 ] || { echo "round $i: $n devices on sv0"; return 1; }
		rdma link delete sha 2>/dev/null
		rdma link delete shb 2>/dev/null
		i=$((i + 1))
	done
	no_softhca_devices
}

# The host's poller threads (engine.c): `pollers` of them, named
# softhca/N, shared by every device: made with the first device,
# stopped with the last.
count_pollers() { cat /proc/[0-9]*/comm 2>/dev/null | grep -cx 'softhca/[0-9]*'; }

pollers_shared() {
	want=$(cat /sys/module/softhca/parameters/pollers) || return 1
	[ "$(count_pollers)" = 0 ] || { echo "$(count_pollers) pollers before any device"; return 1; }
	rdma link add sh0 type softhca netdev sv0 || return 1
	rdma link add sh1 type softhca netdev sv1 || return 1
	n=$(count_pollers)
	[ "$n" = "$want" ] || { echo "$n pollers with two devices, want $want"; return 1; }
	rdma link delete sh0 || return 1
	n=$(count_pollers)
	[ "$n" = "$want" ] || { echo "$n pollers with one device left, want $want"; return 1; }
	rdma link delete sh1 || return 1
	n=$(count_pollers)
	[ "$n" = 0 ] || { echo "$n pollers left after the last device"; return 1; }
}

modprobe softhca
veth_up sv0 sv1
ip link add link sv1 name sv1.5 type vlan id 5
t iproute2_add_delete iproute2_add_del
t tool_add_show_del tool_add_show_del
t tool_show_ipv4_gid tool_show_ipv4_gid
t errors_tool errors_tool
t errors_iproute2 errors_iproute2
t other_drivers_untouched other_drivers_untouched
t concurrent_add_same_netdev concurrent_add_same_netdev
t pollers_shared pollers_shared
cleanup_all
tap_done
