#!/bin/bash
# Runs every guest test script copied to /extra/ (test-*.sh), in name order.
rc=0
for t in /extra/test-*.sh; do
	echo "=== $(basename "$t")"
	bash "$t" || rc=1
	# A test script must leave the module unloaded for the next one.
	grep -q '^devmemnic ' /proc/modules && { rmmod devmemnic || rc=1; }
done
exit $rc
