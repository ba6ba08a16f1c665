# SPDX-License-Identifier: GPL-2.0-only
# shellcheck disable=SC2154
# Sourced by guest.sh and wire.sh: one perftest run, server and client,
# its result appended to $out as one JSON object (perftest.awk).
#
# perftest_run CASE DEVICE TEST BYTES ITERS SPRE SDEV SGID CPRE CDEV CGID HOST:
# ib_TEST -s BYTES -n ITERS, its server on SDEV with GID index SGID
# behind the command prefix SPRE (empty, tools/softhca-run, "ip netns
# exec NS ..."), its client likewise on CDEV, exchanging over TCP with
# HOST; the result is tagged CASE and DEVICE.  perftest fits the TSC
# rate against gettimeofday when it starts and under TCG that fit fails
# now and then ("Correlation coefficient r^2 < 0.9": no report, or inf);
# such a run is repeated, up to three times.  Returns 1 on failure,
# with both sides' output on stderr.
ptport=${ptport:-18900}
perftest_run() {
	name=$1 side=$2 test=$3 bytes=$4 iters=$5 spre=$6 sdev=$7 sg=$8
	cpre=$9
	shift 9
	cdev=$1 cg=$2 host=$3
	good=
	for try in 1 2 3; do
		ptport=$((ptport + 1))
		echo "# $name $side: ib_$test -s $bytes -n $iters -d $sdev -x $sg <- -d $cdev -x $cg (try $try)" >&2
		# shellcheck disable=SC2086
		timeout 300 $spre "ib_$test" -d "$sdev" -x "$sg" -p $ptport -s "$bytes" \
			-n "$iters" > build/bench/pt.srv 2>&1 &
		spid=$!
		# Until it listens, or has ended.
		wait_for 20 sh -c "$spre ss -Hltn 'sport = :$ptport' | grep -q . ||
			! kill -0 $spid" > /dev/null
		# shellcheck disable=SC2086
		timeout 300 $cpre "ib_$test" -d "$cdev" -x "$cg" -p $ptport -s "$bytes" \
			-n "$iters" "$host" > build/bench/pt.cli 2>&1
		crc=$?
		wait $spid
		src=$?
		grep -qs 'Correlation coefficient' build/bench/pt.srv build/bench/pt.cli && continue
		[ $crc = 0 ] && [ $src = 0 ] && good=1
		break
	done
	if [ -n "$good" ] && awk -v c="$name" -v d="$side" -v t="$test" \
		-f tools/bench/perftest.awk build/bench/pt.cli >> "$out"; then
		rm -f build/bench/pt.srv build/bench/pt.cli
		return 0
	fi
	echo "bench: $name on $side failed (server exit $src, client exit $crc):" >&2
	sed 's/^/bench:   /' build/bench/pt.srv build/bench/pt.cli | grep -v -- '-----' >&2
	rm -f build/bench/pt.srv build/bench/pt.cli
	return 1
}
