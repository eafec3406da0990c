// SPDX-License-Identifier: GPL-2.0
/*
 * NAPI and the NET_RX softirq (src/abstractions/napi.rs; skb.rs says why the
 * deferred-free flush raises it this way); the calls that differ between
 * kernels (the _locked add and delete) are in compat.c.
 */
#include <linux/cpu.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "devmemnic_helpers.h"

int dmn_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb)
{
	return napi_gro_receive(napi, skb);
}

void dmn_napi_del(struct napi_struct *napi)
{
	netif_napi_del(napi);
}

bool dmn_napi_schedule(struct napi_struct *napi)
{
	return napi_schedule(napi);
}

struct net_device *dmn_napi_dev(struct napi_struct *napi)
{
	return napi->dev;
}

/* An empty skb handed to loopback's backlog raises NET_RX on this CPU. */
static long dmn_kick_net_rx(void *unused)
{
	struct sk_buff *skb = alloc_skb(0, GFP_KERNEL);

	if (!skb)
		return -ENOMEM;
	skb->dev = init_net.loopback_dev;
	skb->protocol = 0;
	/* (The receive path resets mac_len from it: DEBUG_NET warns if unset.) */
	skb_reset_mac_header(skb);
	local_bh_disable();
	netif_rx(skb);
	local_bh_enable();
	return 0;
}

/* Frees the skbs parked on every CPU's defer list, for teardown. */
void dmn_flush_deferred_skbs(void)
{
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, dmn_kick_net_rx, NULL);
	cpus_read_unlock();
}
