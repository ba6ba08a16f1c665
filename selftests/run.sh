#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run every softhca selftest (inside the guest: tools/vm/run-guest -- ...)
# and print one summary line "selftests: P passed, F failed, S skipped".
# Each test file prints TAP; a test file that exits non-zero without a
# failed test point (a crash, a sanitizer report) counts as one failure.
dir=$(cd "$(dirname "$0")" && pwd)
export REPO=$(cd "$dir/.." && pwd)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# Every file, in the order Debian's kernel (SOFTHCA_SUITE=stock) runs them.
all="kunit.sh module.sh link.sh port.sh verbs.sh cycles.sh objects.sh objects_life.sh datapath.sh mw.sh xrc.sh wire.sh wire_capture.sh rdma_cm.sh fuzz.sh failnth.sh wire_uc.sh wire_rc.sh wire_xrc.sh wire_bridge.sh wire_bulk.sh rdma_cm_wire.sh nvmeof.sh nfsrdma.sh kill.sh perf.sh dropin.sh perftest.sh"

# SOFTHCA_SUITE=debug (the sanitizer tier's kernel, tools/vm/run-guest
# with SOFTHCA_VM_KERNEL=debug): the tests of the driver, KUnit in
# kunit.sh, long loops scaled down (scaled() in lib.sh).  Every file
# there is several times slower (KASAN checks every access, under TCG),
# so make check runs the files whose kernel paths no other file there
# covers: the KUnit suites, module load and unload with devices, the
# objects' lives and a killed process's cleanup, the data path on one
# and two devices, memory windows, XRC across processes, the wire (UD,
# RC, the packet fuzzer on captured frames; XRC's responder and SRQ
# lookups in the receive softirq, wire_xrc.sh), the GSI QP and rdma_cm, a
# kernel ULP (nvme-rdma: fast registration, and a READ's worker copying
# out of a fast-reg MR under its fr_lock, nvmeof.sh's big_blocks; the
# tail probes and the READ window on a rough wire, dd_on_a_rough_wire;
# 66 s there, its fio points skip), the verbs fuzzer with link deletes,
# and fail-nth (which needs this kernel's fault injection: on Debian's
# it says so and skips).
# fail-nth comes early: it keeps one vCPU busy (183 s of CPU in 183 s),
# and the files last here run after the stock tier's guest has ended,
# beside prove-tier only: there a file that uses both vCPUs (the fuzzer's
# processes: 201 s of CPU in 115 s) keeps the host's CPUs busy, where
# fail-nth last left one idle for three minutes.
debug_core="kunit.sh module.sh objects.sh failnth.sh objects_life.sh datapath.sh mw.sh xrc.sh wire_capture.sh wire_xrc.sh rdma_cm.sh nvmeof.sh fuzz.sh"
# SOFTHCA_FULL=1 (make check-full): every file but those never there
# (below; a new file runs there unless named), so it adds what the files
# above share their paths with (link.sh, port.sh and cycles.sh: device add and
# delete, which fuzz.sh and module.sh also do; verbs.sh: queries;
# wire.sh: UD on the wire, which wire_capture.sh also sends) and the
# wire files clean there in their runs: wire_uc.sh (21 points, 536 s)
# and rdma_cm_wire.sh (16, 253 s).  Never there: wire_rc.sh (unscaled,
# too slow under KASAN and TCG; its atomic points ran clean there),
# wire_bulk.sh (a GiB checked: wire_rc.sh's rough points at scale);
# nfsrdma.sh (the debug kernel's configuration has no NFS);
# dropin.sh and perftest.sh (Debian's programs through the drop-in
# library: their kernel paths are datapath.sh's and xrc.sh's); the
# busy-polling runs of kill.sh and perf.sh (two processes spinning on
# two vCPUs starve a KASAN kernel under TCG: a fork took over a minute;
# its kills at random points are fuzz.sh's and xrc.sh's there).
debug_full=
for f in $all; do
	case $f in
	wire_rc.sh|wire_bulk.sh|nfsrdma.sh|dropin.sh|perftest.sh|kill.sh|perf.sh) ;;
	*) debug_full="$debug_full $f" ;;
	esac
done
case "${SOFTHCA_SUITE:-stock}" in
debug)
	default=$debug_core
	[ "${SOFTHCA_FULL:-0}" = 1 ] && default=$debug_full ;;
*)	default=$all ;;
esac
tests=${*:-$default}
passed=0 failed=0 skipped=0
echo
echo "# selftests: started $(cut -d' ' -f1 /proc/uptime) s after the guest's boot"
# busy: the guest's CPU time so far, in seconds (every vCPU: user,
# nice, system, irq, softirq and steal; /proc/stat counts in 1/100 s).
# Under TCG a busy vCPU is a busy host thread, so a file's CPU time is
# what it takes from the other tier's guest running beside it.
busy() {
	awk '/^cpu / { printf "%d", ($2 + $3 + $4 + $7 + $8 + $9) / 100 }' /proc/stat
}
# forks: the processes started since the boot.  A program's start is
# the largest cost of many files: under TCG a fork and exec of /bin/true
# took 32 ms on Debian's kernel and 121 ms on the debug kernel, ip(8)
# 66 and 365 ms, an ASan-built selftest program 210 ms and 1.1 s.
forks() {
	awk '/^processes / { print $2 }' /proc/stat
}
# A file's time limit.  A file that hangs would otherwise take the
# whole guest with it: run-guest kills qemu at its -t, and every point
# of the run is lost with the summary line (a CI run lost the debug
# tier's so, its guest killed an hour in, inside objects_life.sh, with
# no trace of what hung).  So each file runs in its own process group,
# at most SOFTHCA_FILE_LIMIT seconds (default 1800: the longest files
# took 597 s, debug wire_capture.sh beside the stock guest on a slow
# host, and 860 s, stock wire_rc.sh beside two guests) and never past
# the guest's own limit (SOFTHCA_GUEST_LIMIT, which run-guest sets,
# less 150 s for the guest's end: its kmemleak scans took up to 30 s).  At its limit hung() shows where the file's
# processes and the kernel's blocked tasks are, then kills the group;
# the files after it still run, or, when the guest's time is up, each
# counts as a failure.
file_limit=${SOFTHCA_FILE_LIMIT:-1800}
deadline=
[ -n "${SOFTHCA_GUEST_LIMIT:-}" ] && deadline=$((SOFTHCA_GUEST_LIMIT - 150))
uptime_s() { read -r up _ < /proc/uptime && echo "${up%%.*}"; }

# hung FILE PGID: what the file's processes (its process group) and the
# softhca kernel threads are doing, the tasks blocked in the kernel
# (sysrq w) and the kernel's last messages; then the group is killed.
# Straight to the console, and shell builtins first: a guest whose 9p
# root stopped answering blocks every exec (9p waits are killable,
# which the hung-task detector does not report), and what was printed
# before run-guest's timeout is what the log keeps.
hung() {
	echo "# selftest: $1 hung: its processes, their kernel stacks, the blocked tasks"
	# comm may hold spaces: the fields after its closing paren are
	# state, ppid, pgrp.
	group=
	for p in /proc/[0-9]*; do
		read -r st 2>/dev/null < "$p/stat" || continue
		read -r comm 2>/dev/null < "$p/comm" || continue
		# shellcheck disable=SC2086 # split into the fields
		set -- "$1" "$2" ${st##*) }
		if [ "${5:-}" = "$2" ]; then
			group="$group $p"
		else
			case "$comm" in softhca*) ;; *) continue ;; esac
		fi
		wchan='' sysc=''
		read -r wchan 2>/dev/null < "$p/wchan"
		read -r sysc 2>/dev/null < "$p/syscall"
		echo "# pid ${p#/proc/} state $3 [$comm] wchan $wchan syscall $sysc"
		while read -r line; do
			echo "#   $line"
		done 2>/dev/null < "$p/stack"
	done
	echo w > /proc/sysrq-trigger
	for p in $group; do
		echo "# pid ${p#/proc/}: $(tr '\0' ' ' < "$p/cmdline" 2>/dev/null | cut -c1-200)"
	done
	kill -KILL "-$2" 2>/dev/null
	dmesg | tail -150 | sed 's/^/# dmesg: /'
}

# run_file FILE OUT LIMIT: FILE's output in OUT; its exit status, 124 when
# it ran out of time.  The watchdog is one sleep a file, not a poll: under
# the debug kernel a fork and exec costs 121 ms, and a "sleep 1" loop
# took an eighth of a vCPU from the files.
run_file() {
	setsid sh "$dir/$1" > "$2" 2>&1 &
	rf_pid=$!
	rm -f "$2.hung"
	(
		# Ended early (the file did): its sleep goes too.
		trap 'kill "$rf_sleep" 2>/dev/null; exit 0' TERM
		sleep "$3" &
		rf_sleep=$!
		wait "$rf_sleep"
		trap '' TERM
		: > "$2.hung"
		hung "$1" "$rf_pid"
	) &
	rf_wd=$!
	wait "$rf_pid"
	rf_rc=$?
	[ -e "$2.hung" ] || kill "$rf_wd" 2>/dev/null
	wait "$rf_wd"
	if [ -e "$2.hung" ]; then
		rm -f "$2.hung"
		return 124
	fi
	return $rf_rc
}

out_file=$(mktemp)
for t in $tests; do
	limit=$file_limit
	if [ -n "$deadline" ]; then
		left=$((deadline - $(uptime_s)))
		if [ $left -le 0 ]; then
			echo "not ok $t not run: the guest's time ran out"
			failed=$((failed + 1))
			continue
		fi
		[ $left -lt "$limit" ] && limit=$left
	fi
	echo "# selftest: $t"
	t0=$(date +%s) c0=$(busy) f0=$(forks)
	run_file "$t" "$out_file" "$limit"
	rc=$?
	out=$(cat "$out_file")
	printf '%s\n' "$out"
	echo "# selftest: $t took $(( $(date +%s) - t0 )) s, $(( $(busy) - c0 )) s of CPU, $(( $(forks) - f0 )) processes"
	p=$(printf '%s\n' "$out" | grep -E '^ok ' | grep -vc '# SKIP')
	s=$(printf '%s\n' "$out" | grep -Ec '^ok .*# SKIP')
	f=$(printf '%s\n' "$out" | grep -Ec '^not ok ')
	if [ "$rc" = 124 ]; then
		echo "not ok $t did not end within $limit s"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok $t exited $rc"
		f=1
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	# What the host counts if the guest dies before the summary line.
	echo "# selftests so far: $passed passed, $failed failed, $skipped skipped"
done
rm -f "$out_file"
# Where the guest's time went besides the files: its boot before, and
# (run-guest) the kmemleak scans after.
echo "# selftests: ended $(cut -d' ' -f1 /proc/uptime) s after the guest's boot, $(busy) s of CPU"
echo "selftests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
