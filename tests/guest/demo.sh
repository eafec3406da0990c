#!/bin/bash
# make demo, in the guest: load devmemnic and show what it created.
d() { echo "DEMO: $*"; }
d "guest kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MiB"
d "\$ modprobe devmemnic"
modprobe devmemnic || { d "modprobe failed"; exit 1; }
d "kernel log:"
dmesg | grep -E 'devmemnic' | grep -v 'taints kernel' | sed 's/^\[[^]]*\] */DEMO:   /'
d "parent devices on the platform bus (what the NICs will hang off):"
for dev in /sys/bus/platform/devices/devmemnic.*; do
	d "  $(basename "$dev")"
done
d "module parameters: pairs=$(cat /sys/module/devmemnic/parameters/pairs) queues=$(cat /sys/module/devmemnic/parameters/queues)"
d "\$ rmmod devmemnic"
rmmod devmemnic || { d "rmmod failed"; exit 1; }
d "after rmmod: $(ls -d /sys/bus/platform/devices/devmemnic.* 2>/dev/null | wc -l) devmemnic devices left"
