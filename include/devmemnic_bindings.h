/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What devmemnic's own bindgen run reads: the kernel C API the module uses
 * beyond what 6.12's `bindings` crate exposes, plus the module's C helpers.
 */
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/netdevice.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <net/netdev_queues.h>
#include <net/page_pool/types.h>
#include <uapi/linux/ethtool_netlink.h>
#include <kunit/test.h>

#include "devmemnic_helpers.h"
