#!/bin/bash
# Guest tests: NIC personalities (Documentation/personalities.rst). Each
# devmemnic device behaves like strict (devmemnic's own model), gve, bnxt,
# mlx5, fbnic or fbnic-6.18 (fbnic before its header-split fixes): the
# module's personality= for new devices, the ethtool private flag
# personality-NAME per device. What each driver lets a user
# see and refuses is asserted here, on the kernel under test.
source /extra/lib.sh
PERSONALITIES="strict gve bnxt mlx5 fbnic fbnic-6.18"

# ethtool fails, and its message names the reason.
refused() { # pattern command...
	local pat="$1" out
	shift
	out=$("$@" 2>&1) && { echo "accepted: $*"; return 1; }
	grep -qi -- "$pat" <<<"$out" || { echo "refused, but not with '$pat': $*: $out"; return 1; }
}

# A value of ethtool -g's "Current hardware settings" (or maximums, $3=max).
ring_value() { # dev "field" [max]
	ip netns exec peer ethtool -g "$1" | awk -F':[ \t]*' -v f="$2" -v want="${3:-cur}" '
		/^Pre-set maximums/ { sec = "max" } /^Current hardware/ { sec = "cur" }
		$1 == f && sec == want { print $2 }' | head -1
}

# Creates an RSS context on dmnic1; prints its number.
new_context() {
	ip netns exec peer ethtool -X dmnic1 context new equal 2 | awk '/New RSS context is/ { print $NF }' | grep . || return 1
}

# Loading with personality=NAME sets every device's; an unknown name is refused.
module_param() {
	! modprobe devmemnic personality=e1000 2>/dev/null || { echo "personality=e1000 loaded"; return 1; }
	module_loaded && { echo "module left loaded"; return 1; }
	setup_pair personality=fbnic || return 1
	ethtool --show-priv-flags dmnic0 | grep -q "^personality-fbnic *: on" || { ethtool --show-priv-flags dmnic0; return 1; }
	[ "$(ip netns exec peer ethtool --show-priv-flags dmnic1 | grep -c ': on')" = 1 ] || return 1
	if has_feature hds-thresh; then
		[ "$(ring_value dmnic1 "HDS thresh")" = 1536 ] || { echo "hds-thresh $(ring_value dmnic1 "HDS thresh"), want fbnic's 1536"; return 1; }
	fi
	refused "" ethtool -G dmnic0 tcp-data-split off || return 1
}

# Per personality: defaults, limits and refusals ethtool shows.
ethtool_limits() {
	setup_pair || return 1
	ip netns exec peer ethtool -K dmnic1 ntuple on || return 1
	local p ctx
	# A running device keeps its personality.
	refused "" ip netns exec peer ethtool --set-priv-flags dmnic1 personality-gve on || return 1
	for p in $PERSONALITIES; do
		use_personality $p || return 1
		local split rxmax
		split=$(ip netns exec peer ethtool -g dmnic1 | awk '/^TCP data split/ { print $NF }' | tail -1)
		rxmax=$(ring_value dmnic1 RX max)
		echo "info: $p: tcp-data-split $split, rx max $rxmax, hds-thresh $(ring_value dmnic1 "HDS thresh") (max $(ring_value dmnic1 "HDS thresh" max))"
		case $p in
		strict)
			[ "$split" = on ] && [ "$rxmax" = 4096 ] || return 1
			ctx=$(new_context) || return 1
			ip netns exec peer ethtool -N dmnic1 flow-type tcp4 dst-port 7000 action 1 loc 5 >/dev/null || return 1
			;;
		gve)
			[ "$split" = off ] && [ "$rxmax" = 4096 ] || return 1
			refused "" ip netns exec peer ethtool -G dmnic1 rx 1000 || return 1
			refused "" ip netns exec peer ethtool -X dmnic1 context new equal 2 || return 1
			if has_feature hds-thresh; then
				refused "" ip netns exec peer dmn-xfer hds-thresh dmnic1 100 || return 1
			fi
			# ethtool picks the location (gve takes no "any"): the last slot.
			ip netns exec peer ethtool -N dmnic1 flow-type tcp4 dst-port 7000 action 1 | grep -q "ID 63" || return 1
			;;
		bnxt)
			[ "$split" = on ] && [ "$rxmax" = 2047 ] || return 1
			refused "on or auto" ip netns exec peer ethtool -G dmnic1 tcp-data-split off || return 1
			if has_feature hds-thresh; then
				[ "$(ring_value dmnic1 "HDS thresh")" = 640 ] || return 1
				refused "" ip netns exec peer dmn-xfer hds-thresh dmnic1 1024 || return 1
			fi
			refused "" ip netns exec peer ethtool -N dmnic1 flow-type tcp4 dst-port 7000 action 1 loc 3 || return 1
			ip netns exec peer ethtool -N dmnic1 flow-type tcp4 dst-port 7000 action 1 | grep -q "ID 0" || return 1
			;;
		mlx5)
			[ "$split" = off ] && [ "$rxmax" = 8192 ] || return 1
			refused "GRO HW" ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
			ip netns exec peer ethtool -K dmnic1 rx-gro-hw on || return 1
			ip netns exec peer ethtool -G dmnic1 tcp-data-split on || return 1
			ip netns exec peer ethtool -K dmnic1 rx-gro-hw off || return 1
			if has_feature hds-thresh; then
				refused "" ip netns exec peer dmn-xfer hds-thresh dmnic1 1 || return 1
			fi
			;;
		fbnic | fbnic-6.18)
			[ "$split" = on ] && [ "$rxmax" = 65536 ] || return 1
			if has_feature hds-thresh; then
				[ "$(ring_value dmnic1 "HDS thresh")" = 1536 ] && [ "$(ring_value dmnic1 "HDS thresh" max)" = 3584 ] || return 1
			fi
			refused "Cannot disable" ip netns exec peer ethtool -G dmnic1 tcp-data-split off || return 1
			ctx=$(new_context) || return 1
			refused "" ip netns exec peer ethtool -X dmnic1 context new equal 2 || return 1
			;;
		esac
		# Rules and contexts block the next switch: delete them.
		local l c
		for l in $(ip netns exec peer ethtool -n dmnic1 | awk '/^Filter:/ { print $2 }'); do
			ip netns exec peer ethtool -N dmnic1 delete "$l" || return 1
		done
		if [ -n "$ctx" ]; then
			ip netns exec peer ethtool -X dmnic1 context "$ctx" delete || return 1
			ctx=
		fi
		ip netns exec peer ethtool -K dmnic1 rx-gro-hw off 2>/dev/null
	done
}

# Devmem RX, validated (4 MiB each; 64 MiB in make stress), on each
# personality, as its driver on this kernel allows, its payloads packed
# where the driver packs them (fbnic, mlx5); on a kernel older than the driver's devmem support, the binding
# is refused with that driver's error.
devmem_rx_all() {
	setup_pair || return 1
	local p port=5600 bytes=$(($(tier 4 64) * 1024 * 1024))
	for p in gve bnxt mlx5 fbnic; do
		use_personality $p || return 1
		devmem_admin $p || return 1
		port=$((port + 1))
		rs_server $port /tmp/pr.out -c 10.9.0.1 -v 7 --size $((8 * 1024 * 1024))
		if has_feature devmem-tx; then
			wait_listen $port || { tail -3 /tmp/pr.out.err; return 1; }
			ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/pr.cli || { cat /tmp/pr.cli; return 1; }
			wait $RS_PID || { tail -3 /tmp/pr.out.err; return 1; }
			check_rs_summary /tmp/pr.out $bytes || return 1
			grep -q " nic=devmemnic/$p$" /tmp/pr.out || { echo "$p: the summary names another NIC"; return 1; }
			# fbnic packs payloads into its buffers (at 128 bytes), mlx5
			# into its striding buffer (at 256: a session's start), gve
			# and bnxt start each frame's payload in a buffer of its own:
			# off a page boundary only where a read (ncdevmem-rs reads up
			# to 800 KiB) ended inside a frag and the next one resumed it.
			local mid reads=$((bytes / 819200 + 1))
			mid=$(summary_field /tmp/pr.out mid_page_starts)
			echo "info: $p: $mid of $(summary_field /tmp/pr.out frags) frags start off a page boundary"
			if [ $p = fbnic ] || [ $p = mlx5 ]; then
				[ "$mid" -gt $((2 * reads)) ] || { echo "$p: payloads not packed"; return 1; }
			else
				[ "$mid" -le $reads ] || { echo "$p: payloads off a buffer's start"; return 1; }
			fi
			grep -q "^nic: dmnic1 is devmemnic/$p: small TCP segments: " /tmp/pr.out.err || { echo "$p: no NIC line"; return 1; }
		else
			# 6.12: none of these drivers binds devmem yet.
			wait $RS_PID && { echo "$p: bound on 6.12"; return 1; }
			local want="No data available"
			[ $p = mlx5 ] || [ $p = fbnic ] && want="not supported"
			grep -qi "$want" /tmp/pr.out.err || { echo "$p: not refused with '$want':"; tail -3 /tmp/pr.out.err; return 1; }
			echo "info: $p: refused on this kernel: $(grep -i "$want" /tmp/pr.out.err | tail -1 | cut -c1-120)"
		fi
	done
}

# Hardware GRO placement, read in each driver: bnxt's TPA fills an
# aggregation buffer back to back from a fresh one per aggregate, a frag per
# buffer; mlx5's SHAMPO starts a session at a 256-byte stride and packs its
# segments after it. Devmem RX of 2 MiB of MSS-sized frames (the sender's
# TSO off, rx-gro-hw on), validated: segments extended their aggregate's
# frag on both (well under 724 frags a MiB, one a segment); on bnxt every
# aggregate starts at a buffer's start (off a page boundary only where a
# read resumed a frag), on mlx5 most off one.
gro_hw_placement() {
	setup_pair || return 1
	ethtool -K dmnic0 tso off gso off || return 1
	local p port=5620 bytes=$((2 * 1024 * 1024)) ext0 ext frags mid reads=$((2 * 1024 * 1024 / 819200 + 1)) gp
	for p in bnxt mlx5; do
		use_personality $p || return 1
		devmem_admin $p || return 1
		ip netns exec peer ethtool -K dmnic1 rx-gro-hw on || return 1
		ext0=$(rx_sum dmnic1 frags_extended peer) gp=$(rx_sum dmnic1 gro_packets peer)
		port=$((port + 1))
		rs_server $port /tmp/pg.out -c 10.9.0.1 -v 7
		wait_listen $port || { tail -3 /tmp/pg.out.err; return 1; }
		ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/pg.cli || { cat /tmp/pg.cli; return 1; }
		wait $RS_PID || { tail -3 /tmp/pg.out.err; return 1; }
		check_rs_summary /tmp/pg.out $bytes || return 1
		ext=$(($(rx_sum dmnic1 frags_extended peer) - ext0)) gp=$(($(rx_sum dmnic1 gro_packets peer) - gp))
		frags=$(summary_field /tmp/pg.out frags) mid=$(summary_field /tmp/pg.out mid_page_starts)
		echo "info: $p: $gp aggregates, $ext segments extended a frag, $((frags / 2)) frags a MiB, $mid of $frags off a page boundary"
		[ "$gp" -gt 10 ] && [ "$ext" -gt 0 ] && [ $((frags / 2)) -le 400 ] || { echo "$p: aggregates not packed"; return 1; }
		if [ $p = bnxt ]; then
			[ "$mid" -le $reads ] || { echo "$p: an aggregate started inside a buffer"; return 1; }
		else
			[ "$mid" -gt $((2 * reads)) ] || { echo "$p: sessions not packed at its strides"; return 1; }
		fi
	done
	unload_clean || return 1
}

# gve keeps RX queue 0: binding it is refused (ERANGE).
gve_queue0() {
	setup_pair || return 1
	use_personality gve || return 1
	devmem_admin gve || return 1
	ip netns exec peer ncdevmem-rs -l -n -s 10.9.0.2 -p 5620 -f dmnic1 -t 0 -q 1 --size $((4 * 1024 * 1024)) >/dev/null 2>/tmp/g0.err &
	wait $! && { echo "queue 0 bound"; return 1; }
	grep -q "out of range" /tmp/g0.err || { tail -3 /tmp/g0.err; return 1; }
}

# An application's control hello on the steered data connection, read with
# plain recv after binding (kperf's kpm_receive): every modelled driver of
# 7.x splits even a 32-byte payload into the dma-buf at hds-thresh 0, which
# a binding needs, so the read fails with EFAULT, as on that hardware; the
# same transfer without the hello is devmem_rx_all's. fbnic before its
# header-split fixes (fbnic-6.18) kept a frame of up to 128 bytes whole, so
# there the hello is read; but a longer frame leaves payload in its head
# (62 bytes of a full one), which the stack turns into a page frag among
# the net_iovs when it merges that skb behind another (GRO's head_frag path
# in skb_gro_receive, and with GRO off TCP's skb_try_coalesce into the
# receive queue: both only require the two to be equally unreadable), and
# devmem's recvmsg then fails with ENODEV ("Found non-dmabuf skb with
# net_iov"): what the header-split fixes ended.
hello_efault() {
	setup_pair || return 1
	local p port=5640 dm0 dm bytes=$((1024 * 1024))
	for p in $PERSONALITIES; do
		has_feature devmem-tx || [ $p = strict ] || continue
		use_personality $p || return 1
		devmem_admin $p || return 1
		port=$((port + 1))
		dm0=$(rx_sum dmnic1 devmem_packets peer)
		rs_server $port /tmp/ph.out -c 10.9.0.1 -v 7 --hello 32 --size $((8 * 1024 * 1024))
		wait_listen $port || { tail -3 /tmp/ph.out.err; return 1; }
		ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --hello 32 --bytes $bytes >/dev/null 2>&1
		if [ $p = fbnic-6.18 ]; then
			wait $RS_PID && { echo "$p: devmem RX survived payload in skb heads"; return 1; }
			grep -q "^hello: 32 bytes read with plain recv" /tmp/ph.out.err || { echo "$p: no hello read"; tail -3 /tmp/ph.out.err; return 1; }
			grep -q "recvmsg: No such device" /tmp/ph.out.err || { echo "$p: not ENODEV:"; tail -3 /tmp/ph.out.err; return 1; }
			echo "info: $p: hello read with plain recv, then ENODEV once the stack merged a frame with head payload"
		else
			wait $RS_PID && { echo "$p: the hello was readable"; return 1; }
			grep -q "hello: plain recv(MSG_PEEK|MSG_WAITALL) of 32 bytes: Bad address" /tmp/ph.out.err ||
				{ echo "$p: not EFAULT:"; tail -3 /tmp/ph.out.err; return 1; }
			echo "info: $p: hello refused with EFAULT"
		fi
		dm=$(($(rx_sum dmnic1 devmem_packets peer) - dm0))
		echo "info: $p: $dm frames into the dma-buf"
		[ "$dm" -gt 0 ] || { echo "$p: nothing went into the dma-buf"; return 1; }
	done
}

# Upstream's HDS sweep (devmem.py check_rx_hds: each size one write into
# upstream ncdevmem -L, which fails at a linear byte; sent here as
# devmem/upstream-hds-sweep sends it), as that hardware ran it: on fbnic-6.18 every size fails
# (frames up to 128 bytes whole, longer ones cut at byte 128, payload
# included); the same command on fbnic passes (its whole sweep is
# devmem.py@fbnic's). Three sizes here, all twelve in make stress.
hds_sweep_old_fbnic() {
	setup_pair || return 1
	local p size port=5720 pid rc lin0 hds0 want
	for p in fbnic fbnic-6.18; do
		use_personality $p || return 1
		devmem_admin $p || return 1
		for size in $(tier "1 64 4096" "1 8 16 32 64 128 256 512 1024 2048 4096 8192"); do
			[ $p = fbnic ] && [ $size != 1 ] && continue
			port=$((port + 1))
			lin0=$(rx_sum dmnic1 below_hds_thresh peer) hds0=$(rx_sum dmnic1 hds_packets peer)
			ip netns exec peer ncdevmem -l -f dmnic1 -s 10.9.0.2 -p $port -L >/tmp/hs.out 2>&1 &
			pid=$!
			wait_listen $port || { tail -3 /tmp/hs.out; return 1; }
			# (The old one's receiver may reset the connection under the sender.)
			dmn-xfer send 10.9.0.2 $port $size 3 >/dev/null || [ $p = fbnic-6.18 ] || { echo "$p: send failed"; return 1; }
			wait $pid
			rc=$?
			echo "info: $p: size $size: ncdevmem -L exit $rc, frames whole $(($(rx_sum dmnic1 below_hds_thresh peer) - lin0)), split $(($(rx_sum dmnic1 hds_packets peer) - hds0))"
			if [ $p = fbnic ] || [ $p = mlx5 ]; then
				[ $rc = 0 ] || { echo "$p: size $size failed:"; tail -3 /tmp/hs.out; return 1; }
			else
				# A frame of up to 128 bytes (66 of headers) stays whole: a
				# readable skb, copied as plain bytes, no devmem cmsg at all;
				# a longer one is cut, its first payload bytes linear.
				want="received SCM_DEVMEM_LINEAR"
				[ $size -le 62 ] && want="flow steering error"
				[ $rc != 0 ] || { echo "$p: size $size passed, no linear byte"; return 1; }
				grep -q "$want" /tmp/hs.out || { echo "$p: size $size failed, not with '$want':"; tail -3 /tmp/hs.out; return 1; }
			fi
		done
	done
}

# Devmem TX from each personality's device (all four drivers declare
# netmem_tx on 7.2+) into a plain listener, the bytes checked (md5; 2 MiB
# each, 32 MiB in make stress).
devmem_tx_all() {
	setup_pair || return 1
	local p port=5660 bytes=$(($(tier 2 32) * 1024 * 1024)) want got
	want=$(yes "$(printf '\001\002\003\004\005\006')" | head -c $bytes | md5sum | cut -d' ' -f1)
	for p in gve bnxt mlx5 fbnic; do
		ip link set dmnic0 down || return 1
		ethtool --set-priv-flags dmnic0 "personality-$p" on || return 1
		ip link set dmnic0 up || return 1
		port=$((port + 1))
		ip netns exec peer nc -l -p $port </dev/null >/tmp/pt.got 2>/tmp/pt.nc &
		local lpid=$!
		wait_listen $port peer || return 1
		timeout 120 ncdevmem-rs -f dmnic0 -s 10.9.0.2 -p $port -v 7 --bytes $bytes --size $((4 * 1024 * 1024)) \
			>/tmp/pt.tx 2>/tmp/pt.tx.err || { tail -3 /tmp/pt.tx.err; kill $lpid; return 1; }
		wait $lpid
		got=$(md5sum </tmp/pt.got | cut -d' ' -f1)
		echo "info: $p: $(summary_field /tmp/pt.tx bytes) bytes sent from device memory, md5 at the listener $got"
		[ "$got" = "$want" ] || { echo "$p: the listener's bytes differ from the pattern"; return 1; }
	done
}

# zcrx on each personality: 4 KiB buffers everywhere (2 MiB validated, 32
# MiB in make stress,
# every byte zero-copy: at hds-thresh 0 all four split every TCP payload
# into the area, so the kernel copied nothing and posted no COPY event; the
# summary names the personality); 16 KiB buffers only where the driver advertises QCFG_RX_PAGE_SIZE (bnxt,
# mlx5), else refused (EOPNOTSUPP from the core, on gve and fbnic).
zcrx_all() {
	setup_pair || return 1
	local p port=5680 bytes=$(($(tier 2 32) * 1024 * 1024)) spid
	for p in gve bnxt mlx5 fbnic; do
		use_personality $p || return 1
		devmem_admin $p || return 1
		port=$((port + 1))
		ip netns exec peer timeout 120 ncdevmem-rs -l --zcrx -s 10.9.0.2 -c 10.9.0.1 -p $port -f dmnic1 -t 15 -q 1 -v 7 \
			--provider dma-heap --size $((8 * 1024 * 1024)) >/tmp/pz.out 2>/tmp/pz.err &
		spid=$!
		wait_listen $port peer || { tail -3 /tmp/pz.err; return 1; }
		timeout 120 ncdevmem-rs -s 10.9.0.2 -p $port -v 7 --bytes $bytes >/dev/null 2>/tmp/pz.cli || { cat /tmp/pz.cli; return 1; }
		wait $spid || { tail -3 /tmp/pz.err; return 1; }
		[ "$(summary_field /tmp/pz.out bytes)" = $bytes ] || { cat /tmp/pz.out; return 1; }
		[ "$(summary_field /tmp/pz.out validation_errors)" = 0 ] || return 1
		[ "$(summary_field /tmp/pz.out copy_fallback_bytes)" = 0 ] || { echo "$p: $(cat /tmp/pz.out)"; return 1; }
		[ "$(summary_field /tmp/pz.out copy_events)" = 0 ] || return 1
		grep -q " nic=devmemnic/$p$" /tmp/pz.out || { cat /tmp/pz.out; return 1; }
		if has_feature rx-buf-len; then
			port=$((port + 1))
			ip netns exec peer timeout 120 ncdevmem-rs -l --zcrx --rx-buf-len 16384 -s 10.9.0.2 -c 10.9.0.1 -p $port \
				-f dmnic1 -t 15 -q 1 --provider dma-heap --size $((8 * 1024 * 1024)) >/dev/null 2>/tmp/pz16.err &
			spid=$!
			case $p in
			bnxt | mlx5)
				wait_listen $port peer || { tail -3 /tmp/pz16.err; return 1; }
				kill -TERM $spid
				wait $spid
				;;
			*)
				wait $spid && { echo "$p: 16 KiB zcrx buffers accepted"; return 1; }
				grep -qi "not supported" /tmp/pz16.err || { tail -3 /tmp/pz16.err; return 1; }
				;;
			esac
		fi
		echo "info: $p: zcrx $bytes bytes validated"
	done
}

# The qstats each personality reports (netdev qstats-get, as its driver's
# netdev_stat_ops fills them, of the fields devmemnic counts): the device's
# totals after a plain transfer, with packets counted, and one RX queue's.
# fbnic reports hw_drops per queue but not in its base, so the core leaves
# it out of the totals (netdev_nl_stats_add adds only fields both report).
qstats_fields() { # iface [--per-queue] -> the first line's field names
	ip netns exec peer dmn-xfer qstats "$@" | head -1 | tr ' ' '\n' | sed -n 's/=.*//p' | xargs
}
qstats_all() {
	setup_pair || return 1
	local p want got q port=5700 rxp rpid
	local basic="rx-packets rx-bytes tx-packets tx-bytes rx-alloc-fail"
	for p in strict gve bnxt mlx5 fbnic; do
		use_personality $p || return 1
		port=$((port + 1))
		ip netns exec peer dmn-xfer recv $port $((256 * 1024)) 5 >/dev/null 2>&1 &
		rpid=$!
		wait_listen $port peer || return 1
		dmn-xfer send 10.9.0.2 $port $((256 * 1024)) 5 >/dev/null 2>&1 || { echo "$p: send failed"; return 1; }
		wait $rpid || { echo "$p: the transfer failed"; return 1; }
		case $p in
		strict) want="$basic rx-hw-drops rx-csum-bad rx-hw-gro-packets rx-hw-gro-bytes rx-hw-gro-wire-packets rx-hw-gro-wire-bytes tx-hw-drops tx-hw-gso-packets tx-hw-gso-bytes tx-hw-gso-wire-packets tx-stop tx-wake" ;;
		gve) want="$basic" ;;
		bnxt) want="$basic rx-hw-gro-packets rx-hw-gro-wire-packets" ;;
		mlx5) want="$basic rx-hw-gro-packets rx-hw-gro-wire-packets rx-hw-gro-wire-bytes tx-hw-gso-packets tx-hw-gso-bytes tx-stop tx-wake" ;;
		fbnic) want="$basic tx-hw-gso-wire-packets tx-stop tx-wake" ;;
		esac
		got=$(qstats_fields dmnic1)
		[ "$got" = "$want" ] || { echo "$p: device qstats: $got, not $want"; return 1; }
		rxp=$(ip netns exec peer dmn-xfer qstats dmnic1 | sed -n 's/.* rx-packets=\([0-9]*\).*/\1/p')
		[ "${rxp:-0}" -gt 100 ] || { echo "$p: rx-packets ${rxp:-none} after 256 KiB"; return 1; }
		q=$(ip netns exec peer dmn-xfer qstats dmnic1 --per-queue | grep -m1 '^rx 0 ' | tr ' ' '\n' | sed -n 's/=.*//p' | xargs)
		case $p in
		fbnic) want="rx-packets rx-bytes rx-alloc-fail rx-hw-drops" ;;
		*) want=$(tr ' ' '\n' <<<"$want" | grep '^rx-' | xargs) ;;
		esac
		[ "$q" = "$want" ] || { echo "$p: RX queue 0's qstats: $q, not $want"; return 1; }
		echo "info: $p: $got"
	done
}

run_test personality/module-param module_param
run_test personality/ethtool-limits ethtool_limits
run_test personality/devmem-rx devmem_rx_all
run_test personality/gro-hw-placement gro_hw_placement
run_test personality/gve-queue-0-unbindable gve_queue0
run_test personality/hello-efault hello_efault
run_test personality/hds-sweep-old-fbnic hds_sweep_old_fbnic
run_test personality/devmem-tx devmem_tx_all
run_test personality/zcrx zcrx_all
run_test personality/qstats qstats_all
