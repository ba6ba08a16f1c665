#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Fold "perf script -F comm,ip,sym" output (with call chains) into a
table: each function's share of the samples by itself (self) and with
what it calls (total), for the samples of one command or all.

perf report's own tables left out most of the samples of a TCG guest's
cpu-clock profiles (a 1 MiB WRITE stream's crc32_body, a quarter of the
poller's samples, was missing from them), so make bench's WIRE_PROFILE
tables come from here.

usage: perf script -i DATA -F comm,ip,sym | profile.py [--comm C] [--top N]
"""
import argparse
import collections
import sys


def samples(lines):
    comm, chain = None, []
    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            if comm is not None:
                yield comm, chain
            comm, chain = None, []
        elif not line.startswith((" ", "\t")):
            comm, chain = line.split()[0], []
        else:
            parts = line.split(None, 1)
            chain.append(parts[1] if len(parts) > 1 else parts[0])
    if comm is not None:
        yield comm, chain


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--comm", help="only this command's samples")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args()
    own, total, comms = collections.Counter(), collections.Counter(), collections.Counter()
    n = 0
    for comm, chain in samples(sys.stdin):
        comms[comm] += 1
        if a.comm and comm != a.comm or not chain:
            continue
        n += 1
        own[chain[0]] += 1
        for f in set(chain):
            total[f] += 1
    print("# samples by command: " + ", ".join(
        "%s %d" % kv for kv in comms.most_common(6)))
    print("# %d samples%s" % (n, " of " + a.comm if a.comm else ""))
    if not n:
        return
    print("#  self%  total%  function")
    ranked = sorted(total, key=lambda f: (-own[f], -total[f]))[:a.top]
    for f in ranked:
        print("%7.1f %7.1f  %s" % (100.0 * own[f] / n, 100.0 * total[f] / n, f))


if __name__ == "__main__":
    main()
