# SPDX-License-Identifier: GPL-2.0-only
# Shell helpers for softhca selftests: TAP output and common setup.
# Source it, call tap_plan N (or tap_plan_auto), then "t NAME CMD..." per
# test point; finish with tap_done.

TAP_N=0
TAP_FAILED=0
REPO=${REPO:-$(cd "$(dirname "$0")/.." && pwd)}
TOOL=$REPO/build/bin/softhca
SELFTESTS=$REPO/build/selftests
# On the sanitizer tier's debug kernel the programs built without ASan
# and UBSan (selftests/Makefile): the kernel is what is checked there.
if [ "${SOFTHCA_SUITE:-stock}" = debug ]; then
	SELFTESTS=$SELFTESTS/plain
fi

# scaled N: a loop count for this kernel.  On the sanitizer tier's debug
# kernel (SOFTHCA_SUITE=debug, tools/check) every instruction is checked
# and runs several times slower under TCG, and kmemleak, KASAN and
# lockdep look at every object and lock anyway: long stress loops run a
# tenth of their rounds there (at least 1).
scaled() {
	if debug_kernel; then
		echo $(( $1 / 10 > 0 ? $1 / 10 : 1 ))
	else
		echo "$1"
	fi
}

# debug_kernel: the suite runs on the sanitizer tier's debug kernel
# (SOFTHCA_SUITE=debug, tools/check).
debug_kernel() {
	[ "${SOFTHCA_SUITE:-stock}" = debug ]
}

# stock_only WHY: true on Debian's kernel; on the debug kernel it says
# "SKIP: WHY" and fails, and the point returns 77 (run.sh says which
# files the debug kernel leaves out whole).
stock_only() {
	debug_kernel || return 0
	echo "SKIP: $1"
	return 1
}

# one_device_round WHAT: whether a file that runs WHAT (a program) with
# both ends on one device and then across two devices runs the first
# round: on Debian's kernel, and on the debug kernel under make
# check-full.  In make check's debug tier the two-device round alone runs
# (every kernel path of the one-device round but the peer device's
# lookup, at minutes a round there), and this says so as a skipped point.
one_device_round() {
	if ! debug_kernel || [ "${SOFTHCA_FULL:-0}" = 1 ]; then
		return 0
	fi
	echo "ok - $1 with both ends on one device # SKIP on the debug kernel its two-device round runs the same paths (make check-full runs both)"
	return 1
}

# t NAME CMD...: one test point; passes when CMD exits 0.  With
# SOFTHCA_POINTS set (an extended regular expression, for a developer's
# run, e.g. of a file's rough-wire points on the debug kernel) a point
# whose NAME it does not match skips, saying so; name the setup points
# too.
t() {
	name=$1
	shift
	tap_next
	if [ -n "${SOFTHCA_POINTS:-}" ] &&
		! printf '%s\n' "$name" | grep -Eq -- "$SOFTHCA_POINTS"; then
		tap_verdict "$name" 77 "SKIP: not in SOFTHCA_POINTS"
		return 0
	fi
	# The clock from /proc/uptime with builtins: a fork and exec costs
	# a good part of a second on the debug kernel under TCG.
	read -r t_start _ < /proc/uptime
	out=$("$@" 2>&1)
	rc=$?
	read -r t_end _ < /proc/uptime
	# What the suite's time goes to (README, "what each tier costs").
	t_secs=$(( ${t_end%.*} - ${t_start%.*} ))
	[ $t_secs -lt 5 ] || echo "# $name: $t_secs s"
	tap_verdict "$name" $rc "$out"
}

# tap_next: number the next point (TAP_N), after the TAP header.
tap_next() {
	[ "$TAP_N" -eq 0 ] && echo "TAP version 13"
	TAP_N=$((TAP_N + 1))
}

# tap_verdict NAME RC OUT: point TAP_N's line from its exit status RC
# and output OUT: 0 passed (OUT's NOTE: lines, measurements a passing
# test wants on record, are kept), 77 skipped (OUT ends in "SKIP: why"),
# anything else failed (OUT shown, and the kernel log's tail).  Forks
# only for a non-empty OUT.
tap_verdict() {
	if [ "$2" -eq 0 ]; then
		[ -z "$3" ] || printf '%s\n' "$3" | sed -n 's/^NOTE: /# /p'
		echo "ok $TAP_N $1"
	elif [ "$2" -eq 77 ]; then
		echo "ok $TAP_N $1 # SKIP ${3##*SKIP: }"
	else
		echo "not ok $TAP_N $1"
		printf '%s\n' "$3" | sed 's/^/# /'
		echo "# exit status $2"
		# The kernel's last words, for a failure seen only in CI.
		dmesg 2>/dev/null | tail -12 | sed 's/^/# dmesg: /'
		TAP_FAILED=$((TAP_FAILED + 1))
	fi
}

# tap_point NAME RC OUT: a point whose verdict is already known, in this
# shell (t() runs its command in a subshell: a fork a point).
tap_point() {
	tap_next
	tap_verdict "$@"
}

tap_done() {
	echo "1..$TAP_N"
	[ $TAP_FAILED -eq 0 ]
}

# fails CMD...: CMD must fail (non-zero exit).
fails() {
	if "$@"; then
		echo "expected failure: $*"
		return 1
	fi
	return 0
}

# fails_with WORDS CMD...: CMD must fail and say WORDS on stderr/stdout.
fails_with() {
	words=$1
	shift
	out=$("$@" 2>&1) && { echo "expected failure: $*"; return 1; }
	case "$out" in
	*"$words"*) return 0 ;;
	esac
	echo "'$*' failed without saying '$words': $out"
	return 1
}

# A veth pair, both ends up: carrier follows the peer's admin state.
veth_up() {
	ip link add "$1" type veth peer name "$2" &&
	ip link set "$1" up && ip link set "$2" up && rss "$1" && rss "$2"
}

# netdev_del IF: delete IF (a veth: its peer too); fails when the
# kernel still waits for a reference to it after 120 s.  A leaked
# reference waits forever, and the kernel says so every 10 s ("waiting
# for IF to become free"), shown here.  Not a short limit: on the debug
# kernel, with the other guests of make check beside it, one deletion
# took over 15 s with nothing leaked.
netdev_del() {
	timeout 120 ip link del "$1" && return 0
	echo "ip link del $1 did not end within 120 s"
	dmesg | grep -a "waiting for .* to become free" | tail -3
	return 1
}

# rss IF [NS [MASK]]: what IF (in namespace NS, "" for this one)
# receives goes to a CPU chosen by the flow's hash (RPS over every CPU,
# or over the CPUs of the hex MASK), as a NIC's RSS steers it.
# Without it a veth queues each packet on the backlog of the CPU that
# sent it, so a flow whose sender moves between CPUs (a QP's WQEs sent
# by its poller, the next ones inline by a doorbell) can arrive out of
# order: UC then drops the message (the UC tests saw it under TCG), RC
# sends again.  A link keeps a flow in order; so do the tests' wires.
rss() {
	rss_mask=${3:-$(printf '%x' $(( (1 << $(nproc)) - 1 )))}
	rss_set="for q in /sys/class/net/$1/queues/rx-*/rps_cpus; do echo $rss_mask > \$q || exit 1; done"
	if [ -n "$2" ]; then
		ip netns exec "$2" sh -c "$rss_set"
	else
		sh -c "$rss_set"
	fi
}

# hex2 N: N (0..255) as two lowercase hex digits, in $hex2 (no
# subshell: see gid_index).
hex2() {
	hex2=
	for hn in $(($1 / 16)) $(($1 % 16)); do
		case $hn in
		10) hn=a ;; 11) hn=b ;; 12) hn=c ;; 13) hn=d ;; 14) hn=e ;; 15) hn=f ;;
		esac
		hex2=$hex2$hn
	done
}

# gid_index DEV ADDR: the index of DEV's GID for ADDR (IPv4 dotted, or
# IPv6 written out in full as sysfs prints it), for -g.  Shell builtins
# only, the entries read in index order up to the match: this runs
# before each program of a wire pair, and on the debug kernel under TCG
# a fork or an exec costs about 0.2 s (a cat per entry of rxe's 1024
# in the glob's order, 10..199 before 2, once cost 10 s).
gid_index() {
	case "$2" in
	*.*)
		gold=$IFS
		IFS=.
		# shellcheck disable=SC2086
		set -- "$1" $2
		IFS=$gold
		g=0000:0000:0000:0000:0000:ffff
		hex2 "$2"; g=$g:$hex2
		hex2 "$3"; g=$g$hex2
		hex2 "$4"; g=$g:$hex2
		hex2 "$5"; g=$g$hex2
		set -- "$1" "$2.$3.$4.$5"
		;;
	*) g=$2 ;;
	esac
	gi=0
	while [ -e "/sys/class/infiniband/$1/ports/1/gids/$gi" ]; do
		gv=
		read -r gv < "/sys/class/infiniband/$1/ports/1/gids/$gi" 2>/dev/null
		[ "$gv" = "$g" ] && { echo $gi; return 0; }
		gi=$((gi + 1))
	done
	echo "no GID $2 on $1" >&2
	return 1
}

# listens_in PID PORT: a TCP socket listens on PORT in the network
# namespace of process PID, read from /proc/PID/net with shell builtins
# only: the wire files wait for a server this way before each client,
# and a poll that started ip, cat and awk every 0.1 s took most of a
# vCPU from the server it waited for on the debug kernel (5 s a pair).
listens_in() {
	for lf in /proc/$1/net/tcp /proc/$1/net/tcp6; do
		[ -r "$lf" ] || continue
		while read -r _ llocal _ lstate _; do
			# The header line's "local_address" is no hex port:
			# the state test first.
			[ "$lstate" = 0A ] && [ $((0x${llocal##*:})) = "$2" ] && return 0
		done < "$lf"
	done
	return 1
}

# softhca_on_veth N: the veth pair sv0/sv1 and N (1 or 2) softhca
# devices, sh0 on sv0 (and sh1 on sv1), waited for until their GID 0 is
# usable.
softhca_on_veth() {
	veth_up sv0 sv1 || return 1
	rdma link add sh0 type softhca netdev sv0 || return 1
	if [ "$1" = 2 ]; then
		rdma link add sh1 type softhca netdev sv1 || return 1
	fi
	gid0_usable sh0 sv0 || echo "# GID 0 of sh0 not usable yet"
	if [ "$1" = 2 ]; then
		gid0_usable sh1 sv1 || echo "# GID 0 of sh1 not usable yet"
	fi
	return 0
}

dev_exists() { [ -e "/sys/class/infiniband/$1" ]; }

# gid0_usable DEV IF: GID 0 of DEV (IF's IPv6 link-local address) is in the
# table and no longer tentative.  ib_core lists the GID while duplicate
# address detection still runs, and until DAD ends a path to that address
# cannot be resolved (modify_qp to RTR then fails with ETIMEDOUT).
gid0_usable() {
	wait_for 5 sh -c "grep -qsv '^0000:0000:0000:0000:0000:0000:0000:0000\$' /sys/class/infiniband/$1/ports/1/gids/0" &&
	wait_for 10 sh -c "ip -6 addr show dev $2 scope link | grep -q inet6 && ! ip -6 addr show dev $2 tentative | grep -q inet6"
}

# port_attr DEV ATTR: from sysfs ports/1/ATTR, e.g. "4: ACTIVE".
port_attr() { cat "/sys/class/infiniband/$1/ports/1/$2"; }

# wait_for SECONDS CMD...: poll CMD every 0.1 s.
wait_for() {
	limit=$(($1 * 10))
	shift
	i=0
	while [ $i -lt $limit ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	"$@"
}

# cm_listens: some process's cm_id listens (ib_core's resource tracking
# lists every namespace's).  One program (rdma) a call, the match by
# the shell: the rdma_cm files poll it while a server starts.
cm_listens() {
	cm_out=$(rdma resource show cm_id 2>/dev/null)
	case $cm_out in
	*'state LISTEN'*) return 0 ;;
	esac
	return 1
}

# user_res DEV KIND: how many objects of KIND (pd cq qp mr srq ctx)
# processes hold on DEV.  The kernel's own (ib_mad's QP1, its CQ and PD
# on every device) are listed with their owner in brackets ("comm
# [ib_core]") and not counted.  The lines are counted by builtins: two
# programs (timeout, rdma) a call instead of four, and user_left calls
# it six times a device, each exec about 0.2 s on the debug kernel.
user_res() {
	ur_out=$(timeout 5 rdma resource show "$2" 2>/dev/null)
	ur_n=0
	while IFS= read -r ur_l; do
		case $ur_l in
		*'comm ['*) ;;
		"dev $1 "* | "link $1/"*) ur_n=$((ur_n + 1)) ;;
		esac
	done <<EOF
$ur_out
EOF
	echo $ur_n
}

# user_left DEV...: "DEV: KIND N " for every kind with objects on DEV.
user_left() {
	for d in "$@"; do
		dev_exists "$d" || { printf '%s: gone ' "$d"; continue; }
		for k in pd cq qp mr srq ctx; do
			n=$(user_res "$d" "$k")
			[ "$n" = 0 ] || printf '%s: %s %s ' "$d" "$k" "$n"
		done
	done
}

# no_user_objects DEV...: every DEV exists and no process holds an object
# on it.
no_user_objects() { [ -z "$(user_left "$@")" ]; }

# objects_gone DEV...: within 10 s every DEV shows no object of a
# process in `rdma resource show`; otherwise the listing is printed.
objects_gone() {
	wait_for 10 no_user_objects "$@" ||
		{ echo "objects left: $(user_left "$@")"; timeout 5 rdma resource show; return 1; }
}

no_softhca_devices() {
	for d in /sys/class/infiniband/*; do
		[ -e "$d/hca_type" ] || continue
		[ "$(cat "$d/hca_type")" = softhca ] && { echo "left behind: $d"; return 1; }
	done
	return 0
}

cleanup_all() {
	for d in /sys/class/infiniband/*; do
		[ -e "$d/hca_type" ] && rdma link delete "${d##*/}" 2>/dev/null
	done
	rmmod softhca 2>/dev/null
	ip link del sv0 2>/dev/null
	ip link del sv2 2>/dev/null
	true
}
