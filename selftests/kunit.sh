#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# softhca's KUnit suites as they run inside softhca.ko on a kernel with
# KUnit (the sanitizer tier's debug kernel: tools/debug-kernel): loading
# the module runs them; each case's verdict is read from
# /sys/kernel/debug/kunit/SUITE/results and becomes one TAP point here.
# On a kernel without KUnit (Debian's) there is nothing to run: one SKIP.
. "$(dirname "$0")/lib.sh"

modprobe -r softhca 2>/dev/null
if [ ! -d /sys/kernel/debug/kunit ]; then
	t "KUnit suites in softhca.ko" sh -c 'echo "SKIP: this kernel has no KUnit (the debug kernel runs them)"; exit 77'
	tap_done
	exit
fi
modprobe softhca || { echo "not ok 1 modprobe softhca"; exit 1; }
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
		name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ //')
		case "$line" in
		"ok "*"# SKIP"*) t "kunit:$suite.$name" sh -c "echo 'SKIP: ${line##*# SKIP}'; exit 77" ;;
		"ok "*) t "kunit:$suite.$name" true ;;
		*) t "kunit:$suite.$name" sh -c "cat '$d/results'; exit 1" ;;
		esac
		n=$((n + 1))
	done < "$d/results"
done
[ $n -gt 0 ] || t "softhca KUnit suites found in debugfs" sh -c 'ls /sys/kernel/debug/kunit; exit 1'
modprobe -r softhca
tap_done
