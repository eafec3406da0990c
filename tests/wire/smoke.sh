#!/bin/bash
# Two guests on a wire (scripts/vm-pair; the same script in each, WIRE_ROLE
# a or b): the link, then 16 MiB of plain TCP each way, every byte checked
# against the sender's pattern (dmn-xfer). Mixed kernels welcome.
source /extra/lib.sh

link() {
	wire_up || return 1
	echo "info: $WIRE_IF up, $(uname -r) here, $WIRE_PEER_KERNEL at $WIRE_PEER_IP"
}

# A receives (port 7100) what B sends, then B receives (7101) what A sends.
plain_tcp() {
	local bytes=$((16 * 1024 * 1024)) port
	for port in 7100 7101; do
		if { [ "$WIRE_ROLE" = a ] && [ $port = 7100 ]; } || { [ "$WIRE_ROLE" = b ] && [ $port = 7101 ]; }; then
			dmn-xfer recv $port $bytes 3 >/tmp/wire-recv.out 2>&1 || { cat /tmp/wire-recv.out; return 1; }
			grep -q " errors=0$" /tmp/wire-recv.out || { cat /tmp/wire-recv.out; return 1; }
			echo "info: received: $(cat /tmp/wire-recv.out)"
		else
			wire_send $port $bytes 3 || return 1
		fi
	done
}

wire_test wire/link link
[ "$WIRE_FAILED" = 0 ] && wire_test wire/plain-tcp plain_tcp
exit "$WIRE_FAILED"
