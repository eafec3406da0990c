// SPDX-License-Identifier: GPL-2.0
/*
 * Flushing skbs parked on other CPUs' defer lists, for teardown.
 */
#include <linux/cpu.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "devmemnic_helpers.h"

/*
 * Skbs that TCP freed on another CPU wait on that CPU's defer list until its
 * next NET_RX softirq (skb_attempt_defer_free()); on an idle CPU that can be
 * forever, with devmem buffers in their frags. raise_softirq() is not exported:
 * on each CPU, an empty skb handed to loopback's backlog raises NET_RX there
 * (net_rx_action() flushes the defer list first); the stack drops the skb as
 * an unhandled protocol (lo's rx_nohandler).
 */
static long dmn_kick_net_rx(void *unused)
{
	struct sk_buff *skb = alloc_skb(0, GFP_KERNEL);

	if (!skb)
		return -ENOMEM;
	skb->dev = init_net.loopback_dev;
	skb->protocol = 0;
	local_bh_disable();
	netif_rx(skb);
	local_bh_enable();
	return 0;
}

void dmn_flush_deferred_skbs(void)
{
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, dmn_kick_net_rx, NULL);
	cpus_read_unlock();
}
