# SPDX-License-Identifier: GPL-2.0-only
# The result line of a perftest client's output (ib_send_lat, ib_write_bw)
# as one JSON object: ib_*_lat's t_typical (its median half round trip)
# as t_median_us, ib_*_bw's BW average (MiB/s) and MsgRate.  Variables:
# c the case, d the device, t the test (send_lat, write_bw).  Exits 1
# without a result.  A 1 MiB run slow enough (under loss) prints a
# MsgRate of 0.000000: the bandwidth must be positive, the rate a number.
function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ && x + 0 > 0 }
function num0(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ }
/^ #bytes/ { getline; row = 1 }
row && t ~ /_lat$/ && num($5) {
	printf "{\"case\":\"%s\",\"device\":\"%s\",\"tool\":\"perftest\",\"test\":\"%s\",\"conn\":\"RC\",\"bytes\":%d,\"iters\":%d,\"t_median_us\":%s,\"t_avg_us\":%s}\n", c, d, t, $1, $2, $5, $6
	found = 1; exit
}
row && t ~ /_bw$/ && num($4) && num0($5) {
	printf "{\"case\":\"%s\",\"device\":\"%s\",\"tool\":\"perftest\",\"test\":\"%s\",\"conn\":\"RC\",\"bytes\":%d,\"iters\":%d,\"bw_mib_s\":%s,\"msg_rate_mpps\":%s}\n", c, d, t, $1, $2, $4, $5
	found = 1; exit
}
END { exit !found }
