// SPDX-License-Identifier: GPL-2.0
/*
 * What the link kind and the lower device (src/abstractions/link/) need of
 * C. The kind's rtnl_link_ops (setup, newlink, dellink, queue counts,
 * policy), the netdevice notifier and the rx_handler are Rust's (kind.rs);
 * here are the parts made of static inlines and macros. The peer's request is parsed
 * with the netlink macros (NL_SET_ERR_MSG_ATTR, nla_*) and for_each_netdev;
 * the rx_handler's filter is a dozen skb/Ethernet static inlines
 * (skb_vlan_tag_present, eth_hdr, skb_share_check, the core's rx_dropped)
 * that would each need a wrapper, so it stays here as one function, with no
 * callback: it tells the Rust handler what to deliver. netpoll's transmit
 * takes the queue lock with HARD_TX_TRYLOCK, a macro.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/netpoll.h>
#include <linux/rtnetlink.h>
#include <net/rtnetlink.h>

#include "devmemnic_helpers.h"

/*
 * The name and address @peer_req (an IFLA_DEVMEMNIC_PEER) asks of a peer:
 * its IFLA_IFNAME into @name (else @name is left) and its IFLA_ADDRESS into
 * @tb; anything else it sets is refused, as this kind would not honour it.
 */
static int dmn_link_peer_req(const struct nlattr *peer_req, char *name, struct nlattr **tb,
			     struct netlink_ext_ack *extack)
{
	const struct ifinfomsg *ifm = nla_data(peer_req);
	struct nlattr *ptb[IFLA_MAX + 1];
	int err, i;

	err = rtnl_nla_parse_ifinfomsg(ptb, peer_req, extack);
	if (err)
		return err;
	if (ifm->ifi_index || ifm->ifi_flags || ifm->ifi_change) {
		NL_SET_ERR_MSG(extack,
			       "devmemnic: the peer's ifinfomsg must be zero (no index or flags)");
		return -EINVAL;
	}
	for (i = 0; i <= IFLA_MAX; i++) {
		if (!ptb[i] || i == IFLA_IFNAME || i == IFLA_ADDRESS)
			continue;
		NL_SET_ERR_MSG_ATTR(extack, ptb[i],
				    "devmemnic: a peer takes a name and an address only (set the rest on it after)");
		return -EOPNOTSUPP;
	}
	if (ptb[IFLA_ADDRESS] && (nla_len(ptb[IFLA_ADDRESS]) != ETH_ALEN ||
				  !is_valid_ether_addr(nla_data(ptb[IFLA_ADDRESS])))) {
		NL_SET_ERR_MSG_ATTR(extack, ptb[IFLA_ADDRESS],
				    "devmemnic: the peer's address must be a unicast Ethernet address");
		return -EADDRNOTAVAIL;
	}
	if (ptb[IFLA_IFNAME]) {
		nla_strscpy(name, ptb[IFLA_IFNAME], IFNAMSIZ);
		if (!dev_valid_name(name)) {
			NL_SET_ERR_MSG_ATTR(extack, ptb[IFLA_IFNAME],
					    "devmemnic: the peer's name is not a valid interface name");
			return -EINVAL;
		}
	}
	tb[IFLA_ADDRESS] = ptb[IFLA_ADDRESS];
	return 0;
}

/*
 * A peer for @dev, allocated as the core allocates a device of @dev's kind
 * (its setup, queue counts), in @dev's netns: named and addressed as
 * @peer_req asks (NULL: named by the pattern @pattern when registered, a
 * random address); an ERR_PTR on failure.
 */
struct net_device *dmn_link_create_peer(struct net_device *dev, const char *pattern,
					const struct nlattr *peer_req,
					struct netlink_ext_ack *extack)
{
	unsigned char assign = NET_NAME_ENUM;
	struct nlattr *tb[IFLA_MAX + 1] = {};
	char name[IFNAMSIZ];
	struct net_device *peer;
	int err;

	strscpy(name, pattern, IFNAMSIZ);
	if (peer_req) {
		err = dmn_link_peer_req(peer_req, name, tb, extack);
		if (err)
			return ERR_PTR(err);
		if (strcmp(name, pattern))
			assign = NET_NAME_USER;
	}
	peer = rtnl_create_link(dev_net(dev), name, assign, dev->rtnl_link_ops, tb, extack);
	if (IS_ERR(peer))
		return peer;
	dmn_netdev_lockdep_set_classes(peer);
	if (!tb[IFLA_ADDRESS])
		eth_hw_addr_random(peer);
	return peer;
}

u32 dmn_nla_get_u32(const struct nlattr *nla)
{
	return nla_get_u32(nla);
}

/* Frees a device never registered (its data already released). */
void dmn_link_free_unregistered(struct net_device *dev)
{
	free_netdev(dev);
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

int dmn_register_netdevice(struct net_device *dev)
{
	return register_netdevice(dev);
}

void dmn_unregister_netdevice(struct net_device *dev)
{
	unregister_netdevice(dev);
}

/*
 * Whether @lower can carry a stacked device: Ethernet, not loopback, not of
 * kind @ours (NULL: none registered), free.
 */
int dmn_lower_check(struct net_device *lower, const struct rtnl_link_ops *ours,
		    struct netlink_ext_ack *extack)
{
	if (lower->type != ARPHRD_ETHER || (lower->flags & IFF_LOOPBACK)) {
		NL_SET_ERR_MSG(extack, "devmemnic: the lower device must be Ethernet");
		return -EINVAL;
	}
	if (ours && lower->rtnl_link_ops == ours) {
		NL_SET_ERR_MSG(extack, "devmemnic: cannot stack on a devmemnic device");
		return -EINVAL;
	}
	if (netdev_is_rx_handler_busy(lower)) {
		NL_SET_ERR_MSG(extack,
			       "devmemnic: the lower device already has a receive handler (a bridge port, macvlan, bond, ...)");
		return -EBUSY;
	}
	return 0;
}

/*
 * The filter of the rx_handler (src/abstractions/link/kind.rs) on a lower
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
 * Makes @upper (of a registered kind) ride on @lower: a reference, @handler
 * as its rx_handler, the upper/lower link the core shows. rtnl held.
 */
int dmn_lower_attach(struct net_device *lower, struct net_device *upper,
		     rx_handler_func_t *handler, struct netlink_ext_ack *extack)
{
	int err;

	ASSERT_RTNL();
	err = dmn_lower_check(lower, upper->rtnl_link_ops, extack);
	if (err)
		return err;
	dev_hold(lower);
	err = netdev_rx_handler_register(lower, handler, upper);
	if (err)
		goto put;
	err = netdev_upper_dev_link(lower, upper, extack);
	if (err)
		goto unregister;
	return 0;
unregister:
	netdev_rx_handler_unregister(lower);
put:
	dev_put(lower);
	return err;
}

/* Undoes dmn_lower_attach(); no frame reaches @upper from @lower after. */
void dmn_lower_detach(struct net_device *lower, struct net_device *upper)
{
	ASSERT_RTNL();
	netdev_upper_dev_unlink(lower, upper);
	netdev_rx_handler_unregister(lower);
	dev_put(lower);
}

/* The stacked device riding on @lower with @handler, if any; rtnl held. */
struct net_device *dmn_lower_upper(struct net_device *lower, rx_handler_func_t *handler)
{
	if (rcu_access_pointer(lower->rx_handler) != handler)
		return NULL;
	return rtnl_dereference(lower->rx_handler_data);
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

bool dmn_xmit_ok(int ret)
{
	return likely(ret == NET_XMIT_SUCCESS || ret == NET_XMIT_CN);
}

void dmn_lower_uc_add(struct net_device *lower, const struct net_device *upper)
{
	dev_uc_add(lower, upper->dev_addr);
}

void dmn_lower_uc_del(struct net_device *lower, const struct net_device *upper)
{
	dev_uc_del(lower, upper->dev_addr);
}

/* @upper's carrier: on while both are up and @lower has one. */
void dmn_lower_sync_carrier(struct net_device *lower, struct net_device *upper)
{
	if (lower && netif_running(upper) && netif_running(lower) && netif_carrier_ok(lower))
		netif_carrier_on(upper);
	else
		netif_carrier_off(upper);
}

unsigned int dmn_netdev_mtu(const struct net_device *dev)
{
	return READ_ONCE(dev->mtu);
}

int dmn_netdev_ifindex(const struct net_device *dev)
{
	return dev->ifindex;
}

const char *dmn_netdev_name(const struct net_device *dev)
{
	return dev->name;
}

/* Sets @dev's MTU as `ip link set mtu` would; rtnl held. */
int dmn_netdev_set_mtu(struct net_device *dev, unsigned int mtu)
{
	return dev_set_mtu(dev, mtu);
}

/* The device a netdevice notifier's @ptr is about. */
struct net_device *dmn_netdev_notifier_dev(void *ptr)
{
	return netdev_notifier_info_to_dev(ptr);
}

bool dmn_rtnl_is_locked(void)
{
	return rtnl_is_locked();
}
