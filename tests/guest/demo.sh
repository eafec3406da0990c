#!/bin/bash
# make demo, in the guest: load devmemnic, bind a dma-buf to an RX queue, move
# data with devmem TCP, and show what happened.
d() { echo "DEMO: $*"; }
fail() { d "FAILED: $*"; exit 1; }
MIB=$((1024 * 1024))
BYTES=$((${DEMO_MIB:-256} * MIB))
# The server's dma-buf: upstream ncdevmem's 64 MB (ncdevmem-rs's default)
# unless DEMO_DMABUF_MIB says otherwise (make check: binding 64 MB costs tens
# of seconds on 6.12 under TCG).
SIZE=()
DMABUF="a 64 MB udmabuf"
[ -n "${DEMO_DMABUF_MIB:-}" ] && SIZE=(--size $((DEMO_DMABUF_MIB * MIB))) && DMABUF="a $DEMO_DMABUF_MIB MiB udmabuf"

d "guest kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo) MiB"
d "\$ modprobe devmemnic"
modprobe devmemnic || fail "modprobe"
dmesg | grep 'devmemnic: [0-9]* pairs' | sed 's/^\[[^]]*\] */DEMO:   /'
d "  $(ethtool -i dmnic0 | grep -E 'driver|bus-info' | tr '\n' ' ')"
d "  $(ethtool -l dmnic0 | awk '/Current/ {c=1} c && /Combined:/ {print "combined channels: " $2}')," \
	"$(ethtool -g dmnic0 | grep 'TCP data split')"

d ""
d "Two namespaces: dmnic0 (10.9.0.1) here, dmnic1 (10.9.0.2) in 'peer'."
mkdir -p /run/netns
ip netns add peer && ip link set dmnic1 netns peer || fail "netns"
ip addr add 10.9.0.1/24 dev dmnic0 && ip link set dmnic0 up
ip -n peer addr add 10.9.0.2/24 dev dmnic1
ip -n peer link set dmnic1 up
sleep 1

d "\$ ncdevmem-rs -l -s 10.9.0.2 -c 10.9.0.1 -p 5201 -f dmnic1 -t 8 -q 1 -v 7   (in 'peer')"
d "  sets dmnic1 up as upstream ncdevmem does (header split on, RSS over queues 0-7, a"
d "  ntuple rule steering the flow to queue 8) through ethtool netlink and ioctls,"
d "  allocates $DMABUF, binds it to queue 8 (netlink bind-rx), receives with"
d "  MSG_SOCK_DEVMEM, validates every byte through its dma-buf mapping, returns tokens,"
d "  and puts the NIC settings back when it exits"
ip netns exec peer ncdevmem-rs -l -s 10.9.0.2 -c 10.9.0.1 -p 5201 -f dmnic1 -t 8 -q 1 -v 7 "${SIZE[@]}" \
	>/tmp/server.out 2>/tmp/server.err &
spid=$!
for i in $(seq 1 1200); do
	ip netns exec peer cat /proc/net/tcp | grep -q ':1451 00000000:0000 0A' && break
	sleep 0.1
done
grep '^dmnic1: ' /tmp/server.err | sed 's/^/DEMO:   /'
d "\$ ncdevmem-rs -s 10.9.0.2 -p 5201 -v 7 --bytes $BYTES   (here: the sender)"
ncdevmem-rs -s 10.9.0.2 -p 5201 -v 7 --bytes $BYTES >/tmp/client.out || fail "client"
wait $spid || { cat /tmp/server.err | tail -3 | sed 's/^/DEMO:   /'; fail "server"; }

d ""
d "Receiver summary:"
sed 's/ /\n/g' /tmp/server.out | grep '=' | sed 's/^/DEMO:   /'
q8() { ip netns exec peer ethtool -S dmnic1 | awk -v n="rx8_$1:" '$1 == n {print $2}'; }
d "NIC queue 8: $(q8 packets) packets, $(q8 hds_packets) header-split frames," \
	"$(q8 devmem_packets) with their payload DMA'd into the dma-buf"
d ""
d "Every payload byte went from the sender into the dma-buf without a copy through the"
d "receiver's host memory; the receiver saw offsets and tokens (SCM_DEVMEM_DMABUF) and"
d "handed the buffers back (SO_DEVMEM_DONTNEED)."
grep -q 'validation_errors=0' /tmp/server.out || fail "validation errors"
d "After the server exited: dmnic1 $(ip netns exec peer ethtool -g dmnic1 | grep 'TCP data split'),"
d "  $(ip netns exec peer ethtool -n dmnic1 | grep -c '^Filter:') ntuple rules"
ip netns del peer
rmmod devmemnic || fail "rmmod"
d "\$ rmmod devmemnic: done"
