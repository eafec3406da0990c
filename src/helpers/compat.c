// SPDX-License-Identifier: GPL-2.0
/*
 * What differs between the kernels devmemnic builds against (6.12 LTS, 7.2,
 * Debian's stock 7.3), behind one API. Kbuild probes the tree being built
 * and defines:
 *
 *   DMN_OPS_LOCK          devices with queue_mgmt_ops are "ops locked": their
 *                         NDOs, ethtool and queue ops run under dev->lock,
 *                         and napi_{enable,disable}() take that lock (7.2)
 *   DMN_CORE_HDS          the core owns tcp-data-split (dev->cfg->hds_config)
 *   DMN_QUEUE_QCFG        queue ops take a struct netdev_queue_config (the
 *                         RX buffer size, 7.2)
 *   DMN_HDS_THRESH        ethtool rings carry an HDS threshold (7.2)
 *   DMN_RESTART_EXPORTED  netdev_rx_queue_restart() is exported (namespace
 *                         NETDEV_INTERNAL); 6.12 keeps it private, so a copy
 *                         of its sequence lives here
 *   DMN_NETMEM_TX         devices declare devmem TX (dev->netmem_tx): the
 *                         core then hands them skbs whose frags are net_iovs
 *                         (7.2)
 *   DMN_NAPI_CONFIG       netif_napi_add_config(): a NAPI keeps its ID and
 *                         settings per index across channel changes (7.2)
 *   DMN_SYSTEM_PERCPU_WQ  schedule_work() queues on system_percpu_wq (7.2),
 *                         not system_wq
 *   DMN_XDP_FRAGS_INFO    an skb built on an xdp_buff takes its frags with
 *                         xdp_update_skb_frags_info() (7.2), not
 *                         xdp_update_skb_shared_info()
 *   DMN_NEWLINK_PARAMS    rtnl_link_ops.newlink() takes a struct
 *                         rtnl_newlink_params (7.2); 6.12 passes the link
 *                         netns and the attribute tables as arguments (the
 *                         trampoline is Rust's: abstractions/link/kind.rs)
 *   DMN_IRQ_MOVE_PCNTXT   an IRQ moves its affinity from its next interrupt
 *                         unless flagged IRQ_MOVE_PCNTXT (6.12); 7.2 dropped
 *                         the flag and moves it at once
 *
 * Nothing above the abstraction layer sees these.
 */
#include <linux/ethtool.h>
#include <linux/irq.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/netdev_queues.h>
#include <net/rtnetlink.h>
#include <net/netdev_rx_queue.h>
#include <net/xdp.h>
#include <kunit/test.h>
#ifdef DMN_OPS_LOCK
#include <net/netdev_lock.h>
#endif

#include "devmemnic_helpers.h"

/*
 * The locks a device's control operations run under: rtnl, and on 7.2 the
 * instance lock of an ops-locked device (taken after rtnl, as the core does).
 */
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

/* NAPI from a control path that holds the ops locks (NDOs, ethtool, queue ops). */
void dmn_napi_enable_locked(struct napi_struct *napi)
{
#ifdef DMN_OPS_LOCK
	napi_enable_locked(napi);
#else
	napi_enable(napi);
#endif
}

void dmn_napi_disable_locked(struct napi_struct *napi)
{
#ifdef DMN_OPS_LOCK
	napi_disable_locked(napi);
#else
	napi_disable(napi);
#endif
}

/* NAPI off from a path that holds no device lock (teardown of a NAPI left on). */
void dmn_napi_disable_unlocked(struct napi_struct *napi)
{
	napi_disable(napi);
}

/* dev_open()/dev_close() for a caller that holds the ops locks. */
int dmn_netdev_open_locked(struct net_device *dev)
{
#ifdef DMN_OPS_LOCK
	return netif_open(dev, NULL);
#else
	return dev_open(dev, NULL);
#endif
}

void dmn_netdev_close_locked(struct net_device *dev)
{
#ifdef DMN_OPS_LOCK
	netif_close(dev);
#else
	dev_close(dev);
#endif
}

/*
 * The core's header-split configuration (7.2: dev->cfg, what it reports,
 * what a binding checks, and what a rings request is compared with) back to
 * a new device's: tcp-data-split unset, the threshold @thresh, as drivers
 * set their default (fbnic, bnxt). Both copies: an ethtool netlink request
 * in flight swaps cfg_pending in on success. 6.12's core keeps none.
 */
void dmn_netdev_reset_core_hds(struct net_device *dev, u32 thresh)
{
#ifdef DMN_HDS_THRESH
	dev->cfg->hds_thresh = thresh;
	dev->cfg_pending->hds_thresh = thresh;
#endif
#ifdef DMN_CORE_HDS
	dev->cfg->hds_config = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
	dev->cfg_pending->hds_config = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN;
#endif
}

/*
 * Devmem TX: the device reads net_iov frags through their bus address, as a
 * real NIC's TX DMA does (NETMEM_TX_DMA). Set before registering; 6.12 has
 * no devmem TX, and the core there never hands a device such skbs to send.
 */
void dmn_netdev_init_netmem_tx(struct net_device *dev)
{
#ifdef DMN_NETMEM_TX
	dev->netmem_tx = NETMEM_TX_DMA;
#endif
}

/*
 * Adds a NAPI for queue @index from a control path that holds the device's
 * ops locks (an NDO or ethtool op): 7.2's _locked variants assert the
 * instance lock instead of taking it; 6.12 has no instance lock. Where the
 * kernel keeps NAPI config per index (ID, threaded, busy-poll settings), use
 * it, so the queue's NAPI keeps its ID across channel changes and restarts;
 * an index beyond the device's config array gets a plain NAPI.
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
	/* The IRQ the NAPI is reported with (netdev napi-get); -1: none. */
#ifdef DMN_OPS_LOCK
	netif_napi_set_irq_locked(napi, irq);
#else
	netif_napi_set_irq(napi, irq);
#endif
}

/* Removes a NAPI, as dmn_napi_add_locked()'s callers do. */
void dmn_napi_del_locked(struct napi_struct *napi)
{
#ifdef DMN_OPS_LOCK
	netif_napi_del_locked(napi);
#else
	netif_napi_del(napi);
#endif
}

/*
 * Waits for the deferred part of memory-provider teardown. A devmem binding's
 * last reference can drop when a page pool is destroyed; 7.2 then frees the
 * binding (unmapping and detaching the dma-buf from our parent device) from
 * schedule_work(), reached through its percpu_ref's release, which may itself
 * run from the RCU callback of percpu_ref_kill(). The parent device must
 * outlive that: wait for pending RCU callbacks, then for the work queued by
 * them. (6.12 frees the binding synchronously; the wait is then a no-op.)
 * __flush_workqueue() directly, as the flush_workqueue() macro warns at
 * build time about flushing a system-wide queue: the core queues this work
 * there and offers nothing else to wait on. Process context; sleeps.
 */
void dmn_wait_provider_release(void)
{
	rcu_barrier();
#ifdef DMN_SYSTEM_PERCPU_WQ
	__flush_workqueue(system_percpu_wq);
#else
	__flush_workqueue(system_wq);
#endif
}

/*
 * The RX buffer size RX queue @idx runs with: 7.2 renders it from the
 * driver's default and the queue's memory provider (io_uring zcrx's
 * rx_buf_len); older kernels have no queue configuration: one page.
 */
unsigned int dmn_rxq_page_size(struct net_device *dev, unsigned int idx)
{
#ifdef DMN_QUEUE_QCFG
	struct netdev_queue_config qcfg;

	if (idx < dev->num_rx_queues && dev->queue_mgmt_ops) {
		netdev_queue_config(dev, idx, &qcfg);
		if (qcfg.rx_page_size)
			return qcfg.rx_page_size;
	}
#endif
	return PAGE_SIZE;
}

#ifdef DMN_RESTART_EXPORTED
MODULE_IMPORT_NS("NETDEV_INTERNAL");

int dmn_rx_queue_restart(struct net_device *dev, unsigned int idx)
{
	if (!netif_running(dev))
		return -ENETDOWN;
	if (idx >= dev->real_num_rx_queues)
		return -EINVAL;
	return netdev_rx_queue_restart(dev, idx);
}
#else
/*
 * netdev_rx_queue_restart() as 6.12's core does it (net/core/netdev_rx_queue.c),
 * which 6.12 does not export: new memory first, then stop, start on the new
 * memory, free the old; if the start fails, the queue goes back on its old
 * memory. Under the ops locks.
 */
int dmn_rx_queue_restart(struct net_device *dev, unsigned int idx)
{
	const struct netdev_queue_mgmt_ops *ops = dev->queue_mgmt_ops;
	void *new_mem, *old_mem;
	int err;

	ASSERT_RTNL();
	if (!ops)
		return -EOPNOTSUPP;
	if (!netif_running(dev))
		return -ENETDOWN;
	if (idx >= dev->real_num_rx_queues)
		return -EINVAL;

	new_mem = kvzalloc(ops->ndo_queue_mem_size, GFP_KERNEL);
	if (!new_mem)
		return -ENOMEM;
	old_mem = kvzalloc(ops->ndo_queue_mem_size, GFP_KERNEL);
	if (!old_mem) {
		err = -ENOMEM;
		goto free_new;
	}
	err = ops->ndo_queue_mem_alloc(dev, new_mem, idx);
	if (err)
		goto free_old;
	err = ops->ndo_queue_stop(dev, old_mem, idx);
	if (err)
		goto free_new_queue_mem;
	err = ops->ndo_queue_start(dev, new_mem, idx);
	if (err) {
		if (ops->ndo_queue_start(dev, old_mem, idx)) {
			netdev_err(dev, "RX queue %u did not restart on its old memory\n", idx);
			ops->ndo_queue_mem_free(dev, old_mem);
		}
		goto free_new_queue_mem;
	}
	ops->ndo_queue_mem_free(dev, old_mem);
	kvfree(old_mem);
	kvfree(new_mem);
	return 0;

free_new_queue_mem:
	ops->ndo_queue_mem_free(dev, new_mem);
free_old:
	kvfree(old_mem);
free_new:
	kvfree(new_mem);
	return err;
}
#endif

/*
 * Lets an IRQ of devmemnic's own domain move when its affinity is written
 * (process context), rather than at its next interrupt.
 */
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

/*
 * A KUnit case's failure with a Rust-formatted message. Only where the
 * kernel has KUnit built in (Debian's stock kernels do not), as the Rust
 * suites that call it.
 */
#if IS_BUILTIN(CONFIG_KUNIT)
void dmn_kunit_fail(struct kunit *test, const void *fmt_args)
{
	KUNIT_FAIL(test, "%pA", fmt_args);
}
#endif

/*
 * What this build does beyond devmem RX, by the probes above, in the names
 * of scripts/kernel-features (`modinfo -F features devmemnic.ko`): make
 * check holds it against what the kernel offers, so a probe that misses on
 * a new kernel fails the check instead of leaving a feature untested.
 */
#ifdef DMN_NETMEM_TX
#define DMN_FEATURE_DEVMEM_TX " devmem-tx"
#else
#define DMN_FEATURE_DEVMEM_TX ""
#endif
#ifdef DMN_HDS_THRESH
#define DMN_FEATURE_HDS_THRESH " hds-thresh"
#else
#define DMN_FEATURE_HDS_THRESH ""
#endif
#ifdef DMN_QUEUE_QCFG
#define DMN_FEATURE_RX_BUF_LEN " rx-buf-len"
#else
#define DMN_FEATURE_RX_BUF_LEN ""
#endif
#ifdef DMN_NAPI_CONFIG
#define DMN_FEATURE_NAPI_CONFIG " napi-config"
#else
#define DMN_FEATURE_NAPI_CONFIG ""
#endif
/* The KUnit suites are built where Rust sees CONFIG_KUNIT=y. */
#if IS_BUILTIN(CONFIG_KUNIT)
#define DMN_FEATURE_KUNIT " kunit"
#else
#define DMN_FEATURE_KUNIT ""
#endif
MODULE_INFO(features, "devmem-rx xdp" DMN_FEATURE_DEVMEM_TX DMN_FEATURE_HDS_THRESH
	    DMN_FEATURE_RX_BUF_LEN DMN_FEATURE_NAPI_CONFIG DMN_FEATURE_KUNIT);

#ifdef DMN_NEWLINK_PARAMS
/* A link kind's newlink() gets its link netns so (src/abstractions/link/kind.rs). */
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
