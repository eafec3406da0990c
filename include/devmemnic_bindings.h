/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What devmemnic's own bindgen run reads: the kernel C API the module uses
 * beyond what the kernel's `bindings` crate exposes (6.12 and 7.2), plus the module's C helpers.
 */
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <net/rtnetlink.h>
#include <linux/skbuff.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool/types.h>
#include <net/xdp.h>
#include <linux/filter.h>
#include <uapi/linux/ethtool_netlink.h>
#include <kunit/test.h>

#include "devmemnic_helpers.h"

/*
 * Constants bindgen cannot evaluate (function-like macros such as BIT()) or
 * names differently across kernels (7.2 makes the tcp-data-split values a
 * named enum).
 */
enum {
	DMN_TCP_DATA_SPLIT_UNKNOWN = ETHTOOL_TCP_DATA_SPLIT_UNKNOWN,
	DMN_TCP_DATA_SPLIT_DISABLED = ETHTOOL_TCP_DATA_SPLIT_DISABLED,
	DMN_TCP_DATA_SPLIT_ENABLED = ETHTOOL_TCP_DATA_SPLIT_ENABLED,
	DMN_ETHTOOL_COALESCE_STATS_BLOCK_USECS = ETHTOOL_COALESCE_STATS_BLOCK_USECS,
	DMN_RXH_IP_SRC = RXH_IP_SRC,
	DMN_RXH_IP_DST = RXH_IP_DST,
	DMN_RXH_L4_B_0_1 = RXH_L4_B_0_1,
	DMN_RXH_L4_B_2_3 = RXH_L4_B_2_3,
#ifdef DMN_ETHTOOL_OP_NEEDS_RTNL
	DMN_ETHTOOL_OP_NEEDS_RTNL_SCHANNELS = ETHTOOL_OP_NEEDS_RTNL_SCHANNELS,
#endif
#ifdef DMN_QUEUE_QCFG
	DMN_QCFG_RX_PAGE_SIZE = QCFG_RX_PAGE_SIZE,
#endif
	DMN_ETHTOOL_CONSTS_END
};
