// SPDX-License-Identifier: GPL-2.0
/*
 * A link kind (`ip link add NAME link LOWER type KIND`) and the lower
 * device a stacked device rides on: rtnl_link_ops, the rx_handler on the
 * lower device, transmit through it, and the netdevice notifier that
 * reports its changes (src/abstractions/link.rs).
 * (newlink()'s arguments differ between the kernels: compat.c adapts them.)
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/netpoll.h>
#include <linux/rtnetlink.h>
#include <net/rtnetlink.h>

#include "devmemnic_helpers.h"

static const struct dmn_link_callbacks *dmn_link_cbs;
static struct rtnl_link_ops dmn_link_ops;
static unsigned int dmn_link_queues;
static unsigned int dmn_link_max_mtu;

static void dmn_link_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->max_mtu = dmn_link_max_mtu;
	/* The core frees the device after the driver's data goes. */
	dev->needs_free_netdev = true;
	dev->priv_destructor = dmn_link_cbs->destructor;
}

static unsigned int dmn_link_num_queues(void)
{
	return dmn_link_queues;
}

/*
 * The kind's own attributes (IFLA_INFO_DATA): IFLA_DEVMEMNIC_PEER, the
 * peer's ifinfomsg and IFLA_* attributes, as veth's VETH_INFO_PEER.
 */
static const struct nla_policy dmn_link_policy[IFLA_DEVMEMNIC_MAX + 1] = {
	[IFLA_DEVMEMNIC_PEER] = { .len = sizeof(struct ifinfomsg) },
};

/*
 * newlink(), its arguments taken apart by compat.c's: @tb, @data (the kind's
 * attributes, or NULL), and the netns of IFLA_LINK.
 */
int dmn_link_newlink_common(struct net *link_net, struct net_device *dev, struct nlattr *tb[],
			    struct nlattr *data[], struct netlink_ext_ack *extack)
{
	const struct nlattr *peer = data ? data[IFLA_DEVMEMNIC_PEER] : NULL;
	struct net_device *lower = NULL;

	if (tb[IFLA_LINK]) {
		lower = __dev_get_by_index(link_net, nla_get_u32(tb[IFLA_LINK]));
		if (!lower) {
			NL_SET_ERR_MSG(extack, "devmemnic: no such lower device");
			return -ENODEV;
		}
		if (peer) {
			NL_SET_ERR_MSG(extack, "devmemnic: a device stacked on a lower device has no peer");
			return -EINVAL;
		}
	}
	/* Its own lock classes: its transmit nests the lower device's. */
	dmn_netdev_lockdep_set_classes(dev);
	if (!tb[IFLA_ADDRESS])
		eth_hw_addr_random(dev);
	return dmn_link_cbs->newlink(dev, lower, peer, !!tb[IFLA_MTU], extack);
}

/* Deletes @dev, and its peer if it has one (a pair goes whole). */
static void dmn_link_dellink(struct net_device *dev, struct list_head *head)
{
	struct net_device *peer = dmn_link_cbs->dellink(dev);

	unregister_netdevice_queue(dev, head);
	/* (Queued again if already queued: the list moves it in place.) */
	if (peer)
		unregister_netdevice_queue(peer, head);
}

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
 * A peer for @dev, allocated as the core allocates a device of the kind
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
	peer = rtnl_create_link(dev_net(dev), name, assign, &dmn_link_ops, tb, extack);
	if (IS_ERR(peer))
		return peer;
	dmn_netdev_lockdep_set_classes(peer);
	if (!tb[IFLA_ADDRESS])
		eth_hw_addr_random(peer);
	return peer;
}

/* Frees a device never registered (its data already released). */
void dmn_link_free_unregistered(struct net_device *dev)
{
	free_netdev(dev);
}

static struct rtnl_link_ops dmn_link_ops = {
	.setup = dmn_link_setup,
	.dellink = dmn_link_dellink,
	.get_num_tx_queues = dmn_link_num_queues,
	.get_num_rx_queues = dmn_link_num_queues,
	.maxtype = IFLA_DEVMEMNIC_MAX,
	.policy = dmn_link_policy,
};

static struct notifier_block dmn_netdev_notifier;

/*
 * Registers the kind and the notifier that reports lower devices' changes
 * (the one kind a module has: @cbs, @queues per device, MTUs up to @max_mtu).
 */
int dmn_link_register(const char *kind, size_t priv_size, unsigned int queues,
		      unsigned int max_mtu, const struct dmn_link_callbacks *cbs)
{
	int err;

	dmn_link_cbs = cbs;
	dmn_link_queues = queues;
	dmn_link_max_mtu = max_mtu;
	dmn_link_ops.kind = kind;
	dmn_link_ops.priv_size = priv_size;
	dmn_link_ops_set_newlink(&dmn_link_ops);
	err = rtnl_link_register(&dmn_link_ops);
	if (err)
		return err;
	err = register_netdevice_notifier(&dmn_netdev_notifier);
	if (err)
		rtnl_link_unregister(&dmn_link_ops);
	return err;
}

/*
 * Deletes every device of the kind (in every netns; their lower devices
 * are let go), then the kind and the notifier.
 */
void dmn_link_unregister(void)
{
	rtnl_link_unregister(&dmn_link_ops);
	unregister_netdevice_notifier(&dmn_netdev_notifier);
}

bool dmn_link_is_ours(const struct net_device *dev)
{
	return dev->rtnl_link_ops == &dmn_link_ops;
}

/* Calls @f on each device of the kind in @net's netns; rtnl held. */
void dmn_link_for_each(struct net_device *in_net_of, void (*f)(struct net_device *dev, void *ctx),
		       void *ctx)
{
	struct net_device *dev;

	ASSERT_RTNL();
	for_each_netdev(dev_net(in_net_of), dev)
		if (dev->rtnl_link_ops == &dmn_link_ops)
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

/* Whether @lower can carry a stacked device: Ethernet, not loopback, free. */
int dmn_lower_check(struct net_device *lower, struct netlink_ext_ack *extack)
{
	if (lower->type != ARPHRD_ETHER || (lower->flags & IFF_LOOPBACK)) {
		NL_SET_ERR_MSG(extack, "devmemnic: the lower device must be Ethernet");
		return -EINVAL;
	}
	if (lower->rtnl_link_ops == &dmn_link_ops) {
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
 * The rx_handler on a lower device, its data the stacked device: frames
 * unicast to the stacked device's address go to it (as a NIC's MAC filter
 * takes them), broadcast and multicast ones are copied to it and go on,
 * the rest go on. The driver gets frames starting at their Ethernet header.
 */
static rx_handler_result_t dmn_lower_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct net_device *upper = rcu_dereference(skb->dev->rx_handler_data);
	const struct ethhdr *eth = eth_hdr(skb);
	struct sk_buff *copy;

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
			dmn_link_cbs->receive(upper, copy);
		} else {
			dev_core_stats_rx_dropped_inc(upper);
		}
		return RX_HANDLER_PASS;
	}
	if (!ether_addr_equal_64bits(eth->h_dest, upper->dev_addr))
		return RX_HANDLER_PASS;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (skb) {
		skb_push(skb, skb->data - skb_mac_header(skb));
		dmn_link_cbs->receive(upper, skb);
	} else {
		dev_core_stats_rx_dropped_inc(upper);
	}
	return RX_HANDLER_CONSUMED;
}

/*
 * Makes @upper ride on @lower: a reference, the rx_handler, the upper/lower
 * link the core shows. rtnl held.
 */
int dmn_lower_attach(struct net_device *lower, struct net_device *upper,
		     struct netlink_ext_ack *extack)
{
	int err;

	ASSERT_RTNL();
	err = dmn_lower_check(lower, extack);
	if (err)
		return err;
	dev_hold(lower);
	err = netdev_rx_handler_register(lower, dmn_lower_rx_handler, upper);
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

/* The stacked device riding on @lower, if any; rtnl held. */
struct net_device *dmn_lower_upper(struct net_device *lower)
{
	if (rcu_access_pointer(lower->rx_handler) != dmn_lower_rx_handler)
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

static int dmn_netdev_event(struct notifier_block *nb, unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	int what;

	switch (event) {
	case NETDEV_REGISTER:
		what = DMN_LOWER_REGISTER;
		break;
	case NETDEV_UNREGISTER:
		/* A netns move unregisters and registers again: a loss too. */
		what = DMN_LOWER_UNREGISTER;
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		what = DMN_LOWER_STATE;
		break;
	case NETDEV_CHANGEMTU:
		what = DMN_LOWER_MTU;
		break;
	default:
		return NOTIFY_DONE;
	}
	dmn_link_cbs->lower_event(dev, dmn_lower_upper(dev), what);
	return NOTIFY_DONE;
}

static struct notifier_block dmn_netdev_notifier = {
	.notifier_call = dmn_netdev_event,
};

bool dmn_rtnl_is_locked(void)
{
	return rtnl_is_locked();
}
