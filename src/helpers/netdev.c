// SPDX-License-Identifier: GPL-2.0
/*
 * Net devices: private data, netns, references, carrier and TX queue
 * state, features, RSS contexts (src/abstractions/netdev.rs, ethtool.rs,
 * link/).
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>

#include "devmemnic_helpers.h"

void *dmn_netdev_priv(struct net_device *dev)
{
	return netdev_priv(dev);
}

void dmn_netdev_set_parent(struct net_device *dev, struct device *parent)
{
	SET_NETDEV_DEV(dev, parent);
}

void dmn_eth_hw_addr_random(struct net_device *dev)
{
	eth_hw_addr_random(dev);
}

struct net *dmn_dev_net(const struct net_device *dev)
{
	return dev_net(dev);
}

void dmn_dev_hold(struct net_device *dev)
{
	dev_hold(dev);
}

void dmn_dev_put(struct net_device *dev)
{
	dev_put(dev);
}

bool dmn_netif_running(const struct net_device *dev)
{
	return netif_running(dev);
}

/* A received frame lost before it reached a queue (ip -s link's dropped). */
void dmn_netdev_core_rx_dropped_inc(struct net_device *dev)
{
	dev_core_stats_rx_dropped_inc(dev);
}

bool dmn_netif_carrier_ok(const struct net_device *dev)
{
	return netif_carrier_ok(dev);
}

void dmn_txq_stop(struct net_device *dev, unsigned int idx)
{
	netif_tx_stop_queue(netdev_get_tx_queue(dev, idx));
}

void dmn_txq_wake(struct net_device *dev, unsigned int idx)
{
	netif_tx_wake_queue(netdev_get_tx_queue(dev, idx));
}

bool dmn_txq_stopped(struct net_device *dev, unsigned int idx)
{
	return netif_tx_queue_stopped(netdev_get_tx_queue(dev, idx));
}

void dmn_tx_start_all(struct net_device *dev)
{
	netif_tx_start_all_queues(dev);
}

struct device *dmn_netdev_parent(struct net_device *dev)
{
	return dev->dev.parent;
}

bool dmn_netif_rxfh_configured(const struct net_device *dev)
{
	return netif_is_rxfh_configured(dev);
}

bool dmn_rxq_has_provider(struct net_device *dev, unsigned int idx)
{
	if (idx >= dev->num_rx_queues)
		return false;
	return READ_ONCE(__netif_get_rx_queue(dev, idx)->mp_params.mp_priv) != NULL;
}

/* An RSS context's indirection table and key, as the ethtool core keeps them. */
u32 *dmn_rxfh_ctx_indir(struct ethtool_rxfh_context *ctx)
{
	return ethtool_rxfh_context_indir(ctx);
}

u8 *dmn_rxfh_ctx_key(struct ethtool_rxfh_context *ctx)
{
	return ethtool_rxfh_context_key(ctx);
}
