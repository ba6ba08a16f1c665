#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# softhca's KUnit suites as they run inside softhca.ko on a kernel with
# KUnit (the sanitizer tier's debug kernel: tools/debug-kernel): loading
# the module built with them (build/debug-module-kunit) runs them; each
# case's verdict is read from /sys/kernel/debug/kunit/SUITE/results and
# becomes one TAP point here.
# On a kernel without KUnit (Debian's) there is nothing to run: one SKIP.
. "$(dirname "$0")/lib.sh"

modprobe -r softhca 2>/dev/null
if [ ! -d /sys/kernel/debug/kunit ]; then
	t "KUnit suites in softhca.ko" sh -c 'echo "SKIP: this kernel has no KUnit (the debug kernel runs them)"; exit 77'
	tap_done
	exit
fi
# The module with the suites linked in (tools/debug-kernel/build): the
# one the other selftests load has none, or they would run at every load.
ko=$REPO/build/debug-module-kunit/drivers/softhca/softhca.ko
[ -r "$ko" ] || { echo "not ok 1 $ko missing (tools/debug-kernel/build)"; exit 1; }
# shellcheck disable=SC2046
modprobe -a $(modinfo -F depends "$ko" | tr , ' ') &&
	insmod "$ko" || { echo "not ok 1 insmod $ko"; exit 1; }
# kpoint ok|skip|fail NAME [WHY|RESULTS]: one TAP point from a verdict
# already read, as t() prints it, but in this shell: t() runs each point
# in a subshell, a fork each, and the 77 cases' forks took about 40 s of
# the debug kernel under TCG (the suites themselves 8 s).
kpoint() {
	[ "$TAP_N" -eq 0 ] && echo "TAP version 13"
	TAP_N=$((TAP_N + 1))
	case $1 in
	ok) echo "ok $TAP_N $2" ;;
	skip) echo "ok $TAP_N $2 # SKIP$3" ;;
	*)
		echo "not ok $TAP_N $2"
		sed 's/^/# /' "$3"
		TAP_FAILED=$((TAP_FAILED + 1))
		;;
	esac
}

n=0
for d in /sys/kernel/debug/kunit/softhca*; do
	[ -r "$d/results" ] || continue
	suite=${d##*/}
	# "ok N case" / "not ok N case" lines of the suite's own KTAP,
	# indented one level (the cases), not the suite's summary.
	while IFS= read -r line; do
		case "$line" in
		"    ok "*|"    not ok "*) ;;
		*) continue ;;
		esac
		line=${line#    }
		# "[not ]ok N NAME[ # SKIP why]" with builtins only (a fork per
		# case costs seconds in all on the debug kernel under TCG).
		name=${line#not }
		name=${name#ok }
		name=${name#* }
		case "$line" in
		"ok "*"# SKIP"*)
			kpoint skip "kunit:$suite.${name%% # SKIP*}" "${line##*# SKIP}" ;;
		"ok "*) kpoint ok "kunit:$suite.$name" ;;
		*) kpoint fail "kunit:$suite.$name" "$d/results" ;;
		esac
		n=$((n + 1))
	done < "$d/results"
done
[ $n -gt 0 ] || t "softhca KUnit suites found in debugfs" sh -c 'ls /sys/kernel/debug/kunit; exit 1'
modprobe -r softhca
tap_done
