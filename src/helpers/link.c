// SPDX-License-Identifier: GPL-2.0
/*
 * What the link kind and the lower device (src/abstractions/link/) need of
 * C: netlink attribute inlines, for_each_netdev, the rx_handler's filter
 * and netpoll's transmit. The filter is a dozen skb/Ethernet static inlines
 * (skb_vlan_tag_present, eth_hdr, skb_share_check, the core's rx_dropped)
 * that would each need a wrapper, so it stays here as one function, with no
 * callback: it tells the Rust handler what to deliver. netpoll's transmit
 * takes the queue lock with HARD_TX_TRYLOCK, a macro.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/netpoll.h>
#include <linux/rtnetlink.h>
#include <net/netlink.h>

#include "devmemnic_helpers.h"

u32 dmn_nla_get_u32(const struct nlattr *nla)
{
	return nla_get_u32(nla);
}

void *dmn_nla_data(const struct nlattr *nla)
{
	return nla_data(nla);
}

/* Whether @nla holds a unicast Ethernet address. */
bool dmn_nla_is_ether_addr(const struct nlattr *nla)
{
	return nla_len(nla) == ETH_ALEN && is_valid_ether_addr(nla_data(nla));
}

/* Calls @f on each device of kind @ops in @in_net_of's netns; rtnl held. */
void dmn_link_for_each(struct net_device *in_net_of, const struct rtnl_link_ops *ops,
		       void (*f)(struct net_device *dev, void *ctx), void *ctx)
{
	struct net_device *dev;

	ASSERT_RTNL();
	for_each_netdev(dev_net(in_net_of), dev)
		if (dev->rtnl_link_ops == ops)
			f(dev, ctx);
}

void dmn_unregister_netdevice(struct net_device *dev)
{
	unregister_netdevice(dev);
}

/*
 * The filter of the rx_handler (src/abstractions/link/table.rs) on a lower
 * device, its data the stacked device (into @upper): frames unicast to the
 * stacked device's address go to it (as a NIC's MAC filter takes them),
 * broadcast and multicast ones are copied to it and go on, the rest go on.
 * What goes to @upper is left in @deliver (else NULL), starting at its
 * Ethernet header; returns the handler's verdict.
 */
rx_handler_result_t dmn_lower_rx_filter(struct sk_buff **pskb, struct net_device **upper,
					struct sk_buff **deliver)
{
	struct sk_buff *skb = *pskb;
	struct net_device *dev = rcu_dereference(skb->dev->rx_handler_data);
	const struct ethhdr *eth = eth_hdr(skb);
	struct sk_buff *copy;

	*upper = dev;
	*deliver = NULL;
	if (skb_vlan_tag_present(skb) || skb->pkt_type == PACKET_LOOPBACK)
		return RX_HANDLER_PASS;
	/*
	 * A frame lost for want of memory before it reaches a queue counts in
	 * the core's rx_dropped of the stacked device (ip -s link), as
	 * macvlan's do; the queues count their own.
	 */
	if (is_multicast_ether_addr(eth->h_dest)) {
		copy = skb_clone(skb, GFP_ATOMIC);
		if (copy) {
			skb_push(copy, copy->data - skb_mac_header(copy));
			*deliver = copy;
		} else {
			dev_core_stats_rx_dropped_inc(dev);
		}
		return RX_HANDLER_PASS;
	}
	if (!ether_addr_equal_64bits(eth->h_dest, dev->dev_addr))
		return RX_HANDLER_PASS;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (skb) {
		skb_push(skb, skb->data - skb_mac_header(skb));
		*deliver = skb;
	} else {
		dev_core_stats_rx_dropped_inc(dev);
	}
	return RX_HANDLER_CONSUMED;
}

/*
 * netpoll's transmit on the stacked device (netconsole on it): interrupts
 * are off and the stacked device's queue lock is held, where
 * dev_queue_xmit() may not run (its softirqs would run the stacked
 * device's receive, whose replies take that lock again: a lockup). Straight
 * to @lower's driver instead, as netpoll itself transmits; a busy queue
 * drops the message.
 */
static int dmn_lower_xmit_netpoll(struct net_device *lower, struct sk_buff *skb)
{
	u16 q = skb_get_queue_mapping(skb);
	struct netdev_queue *txq;
	netdev_tx_t ret = NETDEV_TX_BUSY;

	if (q >= lower->real_num_tx_queues)
		q = 0;
	skb_set_queue_mapping(skb, q);
	txq = netdev_get_tx_queue(lower, q);
	if (HARD_TX_TRYLOCK(lower, txq)) {
		if (!netif_xmit_frozen_or_stopped(txq))
			ret = netdev_start_xmit(skb, lower, txq, false);
		HARD_TX_UNLOCK(lower, txq);
	}
	if (!dev_xmit_complete(ret)) {
		kfree_skb(skb);
		return NET_XMIT_DROP;
	}
	return NET_XMIT_SUCCESS;
}

/* Sends @skb out of @lower; the core owns it after. */
int dmn_lower_xmit(struct net_device *lower, struct sk_buff *skb)
{
	skb->dev = lower;
	if (unlikely(netpoll_tx_running(lower)))
		return dmn_lower_xmit_netpoll(lower, skb);
	return dev_queue_xmit(skb);
}

/* The device a netdevice notifier's @ptr is about. */
struct net_device *dmn_netdev_notifier_dev(void *ptr)
{
	return netdev_notifier_info_to_dev(ptr);
}
