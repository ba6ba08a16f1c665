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
# Each case's point goes through tap_point() (lib.sh), not t(): t() runs
# its command in a subshell, and the 71 cases' forks took about 40 s of
# the debug kernel under TCG (the suites themselves 8 s).

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
			tap_point "kunit:$suite.${name%% # SKIP*}" 77 "SKIP:${line##*# SKIP}" ;;
		"ok "*) tap_point "kunit:$suite.$name" 0 "" ;;
		*) tap_point "kunit:$suite.$name" 1 "$(cat "$d/results")" ;;
		esac
		n=$((n + 1))
	done < "$d/results"
done
[ $n -gt 0 ] || t "softhca KUnit suites found in debugfs" sh -c 'ls /sys/kernel/debug/kunit; exit 1'
modprobe -r softhca
tap_done
