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
#include <net/gso.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool/types.h>
#include <net/xdp.h>
#include <linux/filter.h>
#include <uapi/linux/ethtool_netlink.h>
#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/module.h>
#include <linux/version.h>

#include "devmemnic_helpers.h"

/*
 * Constants bindgen cannot evaluate (function-like macros such as BIT(),
 * sizeof) or names differently across kernels (7.2 makes the tcp-data-split
 * values a named enum).
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
	/* What napi_build_skb() and XDP keep at a buffer's end for skb_shared_info. */
	DMN_SKB_SHINFO_ROOM = SKB_DATA_ALIGN(sizeof(struct skb_shared_info)),
	DMN_PP_FLAG_DMA_MAP = PP_FLAG_DMA_MAP,
	DMN_PP_FLAG_DMA_SYNC_DEV = PP_FLAG_DMA_SYNC_DEV,
	DMN_PP_FLAG_ALLOW_UNREADABLE_NETMEM = PP_FLAG_ALLOW_UNREADABLE_NETMEM,
	DMN_GFP_ATOMIC_NOWARN = GFP_ATOMIC | __GFP_NOWARN,
	/* (As unsigned: the SKB_GSO_ enum is signed on 7.3.) */
	DMN_SKB_GSO_TCPV4 = SKB_GSO_TCPV4,
	DMN_SKB_GSO_TCPV6 = SKB_GSO_TCPV6,
	DMN_SKB_GSO_TCP_ECN = SKB_GSO_TCP_ECN,
	DMN_SKB_GSO_TCP_FIXEDID = SKB_GSO_TCP_FIXEDID,
	DMN_SKB_GSO_IPXIP4 = SKB_GSO_IPXIP4,
	DMN_SKB_GSO_IPXIP6 = SKB_GSO_IPXIP6,
	/* Where the fields Rust reads are in struct page_pool and sk_buff (checked against bindgen). */
	DMN_PAGE_POOL_MP_PRIV = offsetof(struct page_pool, mp_priv),
	DMN_PAGE_POOL_SLOW = offsetof(struct page_pool, slow),
	DMN_SKB_LEN = offsetof(struct sk_buff, len),
	DMN_SKB_DATA = offsetof(struct sk_buff, data),
	DMN_SKB_QUEUE_MAPPING = offsetof(struct sk_buff, queue_mapping),
#ifdef DMN_ETHTOOL_OP_NEEDS_RTNL
	DMN_ETHTOOL_OP_NEEDS_RTNL_SCHANNELS = ETHTOOL_OP_NEEDS_RTNL_SCHANNELS,
#endif
#ifdef DMN_QUEUE_QCFG
	DMN_QCFG_RX_PAGE_SIZE = QCFG_RX_PAGE_SIZE,
#endif
	DMN_ETHTOOL_CONSTS_END
};
