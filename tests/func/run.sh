#!/bin/bash
# Functional tests: real servers and clients on loopback, bounded in time.
# Each test runs in its own subshell with set -e; the last line is
# "N passed, M failed".
cd "$(dirname "$0")/../.." || exit 1
. tests/func/lib.sh
USAGE_MD=$(pwd)/docs/usage.md
FLOOD=$(pwd)/tests/func/flood.py

# Each tests/func/t_AREA.sh holds the tests of one area; run.sh runs
# them all (or those named), in name order.

for f in tests/func/t_*.sh; do
	. "$f"
done

TESTS=$(declare -F | awk '{print $3}' | grep '^t_')
for t in ${1:-$TESTS}; do
	run_test "$t"
done
finish
