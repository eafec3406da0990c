// SPDX-License-Identifier: GPL-2.0
/*
 * What differs between the kernels devmemnic builds against, where only C
 * can tell (macros, static inlines), behind one dmn_ function for both; the
 * rest of the differences are Rust's, under cfg(dmn_*) in src/abstractions/.
 * Kbuild's probes tested here:
 *
 *   DMN_OPS_LOCK          ops-locked devices: dev->lock, the _locked NAPI calls
 *   DMN_NAPI_CONFIG       netif_napi_add_config(): NAPI config kept per index
 *   DMN_NETMEM_TX         dev->netmem_tx (a bitfield): devmem TX
 *   DMN_IRQ_MOVE_PCNTXT   6.12's IRQ_MOVE_PCNTXT (7.2 dropped the flag)
 *   DMN_XDP_FRAGS_INFO    xdp_update_skb_frags_info(), not _shared_info()
 *   DMN_NEWLINK_PARAMS    rtnl_link_ops.newlink() takes rtnl_newlink_params
 */
#include <linux/irq.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/rtnetlink.h>
#include <net/xdp.h>
#include <kunit/test.h>
#ifdef DMN_OPS_LOCK
#include <net/netdev_lock.h>
#endif

#include "devmemnic_helpers.h"

/* The locks a device's control operations run under: rtnl, then (7.2) dev->lock. */
void dmn_netdev_ops_lock(struct net_device *dev)
{
	rtnl_lock();
#ifdef DMN_OPS_LOCK
	netdev_lock(dev);
#endif
}

void dmn_netdev_ops_unlock(struct net_device *dev)
{
#ifdef DMN_OPS_LOCK
	netdev_unlock(dev);
#endif
	rtnl_unlock();
}

/* Devmem TX: the device reads net_iov frags by DMA. Before registering. */
void dmn_netdev_init_netmem_tx(struct net_device *dev)
{
#ifdef DMN_NETMEM_TX
	dev->netmem_tx = NETMEM_TX_DMA;
#endif
}

/*
 * Adds a NAPI for queue @index, the ops locks held. Where the kernel keeps
 * NAPI config per index (ID, threaded, busy-poll), use it, so the queue's
 * NAPI keeps its ID across channel changes and restarts; an index beyond
 * the device's config array gets a plain NAPI. @irq: reported with it
 * (netdev napi-get); -1: none.
 */
void dmn_napi_add_locked(struct net_device *dev, struct napi_struct *napi,
			 int (*poll)(struct napi_struct *napi, int budget), unsigned int index,
			 int irq)
{
#ifdef DMN_NAPI_CONFIG
	if (index < max(dev->num_rx_queues, dev->num_tx_queues))
		netif_napi_add_config_locked(dev, napi, poll, index);
	else
		netif_napi_add_weight_locked(dev, napi, poll, NAPI_POLL_WEIGHT);
#elif defined(DMN_OPS_LOCK)
	netif_napi_add_weight_locked(dev, napi, poll, NAPI_POLL_WEIGHT);
#else
	netif_napi_add(dev, napi, poll);
#endif
#ifdef DMN_OPS_LOCK
	netif_napi_set_irq_locked(napi, irq);
#else
	netif_napi_set_irq(napi, irq);
#endif
}

void dmn_napi_del_locked(struct napi_struct *napi)
{
#ifdef DMN_OPS_LOCK
	netif_napi_del_locked(napi);
#else
	netif_napi_del(napi);
#endif
}

/* Lets an IRQ of our domain move when its affinity is written, not at its next interrupt. */
void dmn_irq_set_movable(unsigned int virq)
{
#ifdef DMN_IRQ_MOVE_PCNTXT
	irq_set_status_flags(virq, IRQ_MOVE_PCNTXT);
#endif
}

/* Gives @skb (built on @xdp's head) the buff's @nr_frags frags of @size bytes. */
void dmn_skb_take_xdp_frags(struct sk_buff *skb, const struct xdp_buff *xdp, u8 nr_frags,
			    u32 size)
{
#ifdef DMN_XDP_FRAGS_INFO
	xdp_update_skb_frags_info(skb, nr_frags, size, nr_frags * xdp->frame_sz,
				  xdp_buff_get_skb_flags(xdp));
#else
	xdp_update_skb_shared_info(skb, nr_frags, size, nr_frags * xdp->frame_sz,
				   xdp_buff_is_frag_pfmemalloc(xdp));
#endif
}

/* A KUnit failure with a Rust-formatted message, where KUnit is built in. */
#if IS_BUILTIN(CONFIG_KUNIT)
void dmn_kunit_fail(struct kunit *test, const void *fmt_args)
{
	KUNIT_FAIL(test, "%pA", fmt_args);
}
#endif

#ifdef DMN_NEWLINK_PARAMS
/* A link kind's newlink() gets its link netns so (src/abstractions/link/table.rs). */
struct net *dmn_rtnl_newlink_link_net(struct rtnl_newlink_params *params)
{
	return rtnl_newlink_link_net(params);
}
#endif

/* A stacked device's own lock classes (netdev_lock.h on 7.2). */
void dmn_netdev_lockdep_set_classes(struct net_device *dev)
{
	netdev_lockdep_set_classes(dev);
}
