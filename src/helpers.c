// SPDX-License-Identifier: GPL-2.0
/*
 * C helpers for devmemnic's Rust code; see include/devmemnic_helpers.h.
 */
#include <linux/dma-direct.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/ptr_ring.h>
#include <linux/skbuff.h>
#include <net/netdev_queues.h>
#include <net/netdev_rx_queue.h>
#include <net/page_pool/helpers.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <linux/workqueue.h>
#include <linux/cpu.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <kunit/test.h>

#include "devmemnic_helpers.h"

static unsigned int pairs = 1;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "Number of device pairs to create (1..16, default 1)");

static unsigned int queues = 16;
module_param(queues, uint, 0444);
MODULE_PARM_DESC(queues, "RX/TX queues per device (1..64, default 16: upstream ncdevmem binds 8..15)");

unsigned int dmn_param_pairs(void)
{
	return pairs;
}

unsigned int dmn_param_queues(void)
{
	return queues;
}

void dmn_kunit_fail(struct kunit *test, const void *fmt_args)
{
	KUNIT_FAIL(test, "%pA", fmt_args);
}

void dmn_msleep(unsigned int ms)
{
	msleep(ms);
}

bool dmn_dma_mapping_error(struct device *dev, dma_addr_t addr)
{
	return dma_mapping_error(dev, addr);
}

u64 dmn_dma_get_mask(struct device *dev)
{
	return dma_get_mask(dev);
}

dma_addr_t dmn_dma_map_page(struct device *dev, struct page *page, size_t offset,
			    size_t size, int dir)
{
	return dma_map_page(dev, page, offset, size, dir);
}

void dmn_dma_unmap_page(struct device *dev, dma_addr_t addr, size_t size, int dir)
{
	dma_unmap_page(dev, addr, size, dir);
}

/*
 * The "DMA engine" of a virtual NIC: a bus address on @dev back to the page
 * it names. Valid for dma-direct (no IOMMU), which is what a platform device
 * gets; NULL if the address does not name RAM.
 */
struct page *dmn_dma_addr_to_page(struct device *dev, dma_addr_t addr)
{
	phys_addr_t phys;

	if (get_dma_ops(dev))
		return NULL;
	phys = dma_to_phys(dev, addr);
	if (!pfn_valid(PHYS_PFN(phys)))
		return NULL;
	return pfn_to_page(PHYS_PFN(phys));
}

void *dmn_kmap_local_page(struct page *page)
{
	return kmap_local_page(page);
}

void dmn_kunmap_local(void *addr)
{
	kunmap_local(addr);
}

/* Net devices. */

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

bool dmn_netif_running(const struct net_device *dev)
{
	return netif_running(dev);
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

unsigned int dmn_real_num_rx_queues(const struct net_device *dev)
{
	return dev->real_num_rx_queues;
}

unsigned int dmn_real_num_tx_queues(const struct net_device *dev)
{
	return dev->real_num_tx_queues;
}

void dmn_rcu_read_lock(void)
{
	rcu_read_lock();
}

void dmn_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

struct device *dmn_netdev_parent(struct net_device *dev)
{
	return dev->dev.parent;
}

u64 dmn_netdev_features(const struct net_device *dev)
{
	return dev->features;
}

/*
 * What devmemnic advertises: SG and checksum offload (the wire is virtual),
 * TSO (the receiving side keeps super-frames whole, like hardware GRO), flow
 * steering and hashing.
 */
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

/*
 * Skbs that TCP freed on another CPU wait on that CPU's defer list until its
 * next NET_RX softirq (skb_attempt_defer_free()); on an idle CPU that can be
 * forever, with devmem buffers in their frags. raise_softirq() is not exported:
 * on each CPU, an empty skb handed to loopback's backlog raises NET_RX there
 * (net_rx_action() flushes the defer list first); the stack drops the skb as
 * an unhandled protocol (lo's rx_nohandler).
 */
static long dmn_kick_net_rx(void *unused)
{
	struct sk_buff *skb = alloc_skb(0, GFP_KERNEL);

	if (!skb)
		return -ENOMEM;
	skb->dev = init_net.loopback_dev;
	skb->protocol = 0;
	local_bh_disable();
	netif_rx(skb);
	local_bh_enable();
	return 0;
}

void dmn_flush_deferred_skbs(void)
{
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, dmn_kick_net_rx, NULL);
	cpus_read_unlock();
}

void dmn_device_get(struct device *dev)
{
	get_device(dev);
}

/*
 * A devmem binding's dma-buf attachment points at our parent device, and the
 * binding can outlive the net device (the netlink socket holds it): the module
 * stays loaded while any queue of ours has one.
 */
void dmn_this_module_get(void)
{
	__module_get(THIS_MODULE);
}

void dmn_this_module_put(void)
{
	module_put(THIS_MODULE);
}

void dmn_rtnl_lock(void)
{
	rtnl_lock();
}

void dmn_rtnl_unlock(void)
{
	rtnl_unlock();
}

u64 dmn_default_features(void)
{
	return NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_RXCSUM | NETIF_F_HIGHDMA |
	       NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_NTUPLE | NETIF_F_RXHASH;
}

u64 dmn_feature_ntuple(void)
{
	return NETIF_F_NTUPLE;
}

unsigned int dmn_rx_headroom(void)
{
	return NET_SKB_PAD + NET_IP_ALIGN;
}

u8 dmn_rss_hash_top(void)
{
	return ETH_RSS_HASH_TOP;
}

/* What NL_SET_ERR_MSG() does; @msg must be static (the Rust side ensures it). */
void dmn_extack_msg(struct netlink_ext_ack *extack, const char *msg)
{
	if (extack)
		extack->_msg = msg;
}

/* NAPI. */

void dmn_napi_add(struct net_device *dev, struct napi_struct *napi, dmn_napi_poll_fn poll)
{
	netif_napi_add(dev, napi, poll);
}

void dmn_napi_del(struct napi_struct *napi)
{
	netif_napi_del(napi);
}

void dmn_napi_schedule(struct napi_struct *napi)
{
	napi_schedule(napi);
}

struct net_device *dmn_napi_dev(struct napi_struct *napi)
{
	return napi->dev;
}

/* Socket buffers. */

unsigned int dmn_skb_len(const struct sk_buff *skb)
{
	return skb->len;
}

unsigned int dmn_skb_headlen(const struct sk_buff *skb)
{
	return skb_headlen(skb);
}

const void *dmn_skb_data(const struct sk_buff *skb)
{
	return skb->data;
}

u16 dmn_skb_queue_mapping(const struct sk_buff *skb)
{
	return skb_get_queue_mapping(skb);
}

bool dmn_skb_csum_partial(const struct sk_buff *skb)
{
	return skb->ip_summed == CHECKSUM_PARTIAL;
}

void dmn_skb_set_csum_unnecessary(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
}

void dmn_skb_rx_finish(struct sk_buff *skb, struct net_device *dev, u16 rxq, u32 hash,
		       bool l4_hash)
{
	skb_record_rx_queue(skb, rxq);
	if (hash)
		skb_set_hash(skb, hash, l4_hash ? PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
	skb->protocol = eth_type_trans(skb, dev);
}

/*
 * A TSO super-frame from the peer arrives as one skb, as hardware GRO delivers
 * it: keep its TCP segmentation so the stack (and GRO) see the wire segments.
 */
void dmn_skb_copy_gso(struct sk_buff *to, const struct sk_buff *from)
{
	const unsigned int tcp_types = SKB_GSO_TCPV4 | SKB_GSO_TCPV6 | SKB_GSO_TCP_ECN |
				       SKB_GSO_TCP_FIXEDID;

	if (!skb_is_gso(from) || !(skb_shinfo(from)->gso_type & tcp_types))
		return;
	skb_shinfo(to)->gso_size = skb_shinfo(from)->gso_size;
	skb_shinfo(to)->gso_type = skb_shinfo(from)->gso_type & tcp_types;
	skb_shinfo(to)->gso_segs = skb_shinfo(from)->gso_segs;
}

unsigned int dmn_skb_gso_segs(const struct sk_buff *skb)
{
	return skb_is_gso(skb) ? max_t(unsigned int, skb_shinfo(skb)->gso_segs, 1) : 1;
}

u32 dmn_skb_hash(const struct sk_buff *skb)
{
	return skb->hash;
}

bool dmn_skb_l4_hash(const struct sk_buff *skb)
{
	return skb->l4_hash;
}

void dmn_skb_set_hash(struct sk_buff *skb, u32 hash, bool l4)
{
	skb_set_hash(skb, hash, l4 ? PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
}

void dmn_skb_mark_for_recycle(struct sk_buff *skb)
{
	skb_mark_for_recycle(skb);
}

void *dmn_skb_put(struct sk_buff *skb, unsigned int len)
{
	return skb_put(skb, len);
}

void dmn_skb_reserve(struct sk_buff *skb, int len)
{
	skb_reserve(skb, len);
}

unsigned int dmn_skb_frags(const struct sk_buff *skb)
{
	return skb_shinfo(skb)->nr_frags;
}

void dmn_kfree_skb_any(struct sk_buff *skb)
{
	dev_kfree_skb_any(skb);
}

void dmn_consume_skb_any(struct sk_buff *skb)
{
	dev_consume_skb_any(skb);
}

/* Bytes a buffer needs to hold @data_len bytes after headroom as an skb head. */
unsigned int dmn_skb_build_size(unsigned int data_len)
{
	return SKB_DATA_ALIGN(NET_SKB_PAD + NET_IP_ALIGN + data_len) +
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

/* Rings. */

struct ptr_ring *dmn_ring_alloc(unsigned int size)
{
	struct ptr_ring *ring = kzalloc(sizeof(*ring), GFP_KERNEL);

	if (!ring)
		return NULL;
	if (ptr_ring_init(ring, size, GFP_KERNEL)) {
		kfree(ring);
		return NULL;
	}
	return ring;
}

void dmn_ring_free(struct ptr_ring *ring)
{
	ptr_ring_cleanup(ring, NULL);
	kfree(ring);
}

/* The _bh variants: the ring is used from xmit, NAPI and process context. */
int dmn_ring_produce(struct ptr_ring *ring, void *ptr)
{
	return ptr_ring_produce_bh(ring, ptr);
}

void *dmn_ring_consume(struct ptr_ring *ring)
{
	return ptr_ring_consume_bh(ring);
}

bool dmn_ring_empty(struct ptr_ring *ring)
{
	return ptr_ring_empty_bh(ring);
}

bool dmn_ring_full(struct ptr_ring *ring)
{
	return ptr_ring_full(ring);
}

/* Page pools. */

struct page_pool *dmn_page_pool_create(struct device *dma_dev, struct napi_struct *napi,
				       struct net_device *netdev, unsigned int queue_idx,
				       unsigned int pool_size, bool allow_unreadable)
{
	struct page_pool_params pp = {
		.order = 0,
		.pool_size = pool_size,
		.nid = NUMA_NO_NODE,
		.dev = dma_dev,
		.napi = napi,
		.dma_dir = DMA_FROM_DEVICE,
		.max_len = PAGE_SIZE,
		.offset = 0,
		.netdev = netdev,
		.queue_idx = queue_idx,
		/* A memory provider needs DMA_MAP and DMA_SYNC_DEV (it turns sync off). */
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV |
			 (allow_unreadable ? PP_FLAG_ALLOW_UNREADABLE_NETMEM : 0),
	};

	return page_pool_create(&pp);
}

void dmn_page_pool_destroy(struct page_pool *pool)
{
	page_pool_destroy(pool);
}

bool dmn_page_pool_has_provider(const struct page_pool *pool)
{
	return pool->mp_priv != NULL;
}

/*
 * Buffers of a pool that are neither back in the pool (alloc cache, recycle
 * ring) nor released: held by skbs, sockets or userspace tokens. For a pool
 * that no longer allocates (retired), this only goes down.
 *
 * The ring's entries are those from consumer_head up to producer: a ptr_ring
 * zeroes consumed slots lazily, in batches, so a slot behind consumer_head
 * may still look full while its buffer is out. Counting non-NULL slots would
 * call such buffers cached and let a devmem pool be destroyed with buffers
 * out (its deferred release then outlives our parent device).
 */
long dmn_page_pool_outstanding(struct page_pool *pool)
{
	struct ptr_ring *r = &pool->ring;
	long held = (s32)(READ_ONCE(pool->pages_state_hold_cnt) -
			  atomic_read(&pool->pages_state_release_cnt));
	long cached = READ_ONCE(pool->alloc.count);
	int head, prod;

	spin_lock_bh(&r->consumer_lock);
	spin_lock(&r->producer_lock);
	head = r->consumer_head;
	prod = r->producer;
	if (prod != head)
		cached += (prod - head + r->size) % r->size;
	else if (r->size && r->queue[head])
		cached += r->size;
	spin_unlock(&r->producer_lock);
	spin_unlock_bh(&r->consumer_lock);
	return held - cached;
}

void dmn_page_pool_debug(struct page_pool *pool)
{
	int i, ring = 0;

	for (i = 0; i < pool->ring.size; i++)
		if (READ_ONCE(pool->ring.queue[i]))
			ring++;
	pr_info("devmemnic: pool %px hold %u release %d alloc.count %u ring %d/%d user_cnt %d mp %px\n",
		pool, READ_ONCE(pool->pages_state_hold_cnt),
		atomic_read(&pool->pages_state_release_cnt), pool->alloc.count, ring,
		pool->ring.size, refcount_read(&pool->user_cnt), pool->mp_priv);
}

bool dmn_page_pool_allows_unreadable(const struct page_pool *pool)
{
	return pool->slow.flags & PP_FLAG_ALLOW_UNREADABLE_NETMEM;
}

/* The device and RX queue a pool was created for (what netlink reports). */
int dmn_page_pool_queue(const struct page_pool *pool, struct net_device **dev)
{
	*dev = pool->slow.netdev;
	return pool->slow.queue_idx;
}

/* KUnit: a zeroed broadcast Ethernet frame of @len bytes (ethertype 0x88b5,
 * local experimental), for exercising rings. */
struct sk_buff *dmn_alloc_test_frame(unsigned int len)
{
	struct sk_buff *skb;

	if (len < ETH_HLEN)
		return NULL;
	skb = alloc_skb(len, GFP_KERNEL);
	if (!skb)
		return NULL;
	memset(skb_put(skb, len), 0, len);
	memset(skb->data, 0xff, ETH_ALEN);
	skb->data[12] = 0x88;
	skb->data[13] = 0xb5;
	return skb;
}

unsigned long dmn_pp_alloc_netmem(struct page_pool *pool)
{
	return (__force unsigned long)page_pool_alloc_netmems(pool, GFP_ATOMIC | __GFP_NOWARN);
}

void dmn_pp_put_netmem(struct page_pool *pool, unsigned long netmem, bool napi_direct)
{
	page_pool_put_full_netmem(pool, (__force netmem_ref)netmem, napi_direct);
}

dma_addr_t dmn_netmem_dma_addr(unsigned long netmem)
{
	return page_pool_get_dma_addr_netmem((__force netmem_ref)netmem);
}

bool dmn_netmem_is_net_iov(unsigned long netmem)
{
	return netmem_is_net_iov((__force netmem_ref)netmem);
}

/* A host-memory fragment for headers or a linear frame; its kernel address. */
void *dmn_pp_alloc_frag(struct page_pool *pool, unsigned int size, unsigned int *offset,
			dma_addr_t *dma)
{
	struct page *page = page_pool_alloc_frag(pool, offset, size, GFP_ATOMIC | __GFP_NOWARN);

	if (!page)
		return NULL;
	*dma = page_pool_get_dma_addr(page) + *offset;
	return page_address(page) + *offset;
}

void dmn_pp_free_frag(struct page_pool *pool, void *va)
{
	page_pool_put_full_page(pool, virt_to_head_page(va), false);
}

/* Returns a fragment to the pool its page belongs to. */
void dmn_pp_free_frag_va(void *va)
{
	struct page *page = virt_to_head_page(va);

	page_pool_put_full_page(page->pp, page, false);
}

void dmn_skb_add_rx_frag_netmem(struct sk_buff *skb, unsigned long netmem, unsigned int off,
				unsigned int size, unsigned int truesize)
{
	skb_add_rx_frag_netmem(skb, skb_shinfo(skb)->nr_frags, (__force netmem_ref)netmem, off,
			       size, truesize);
}

/*
 * netdev_rx_queue_restart() as the core does it (net/core/netdev_rx_queue.c):
 * 6.12 does not export it. New memory first, then stop, start on the new
 * memory, free the old; if the start fails, the queue goes back on its old
 * memory. Under rtnl.
 */
static int dmn_rx_queue_restart(struct net_device *dev, unsigned int idx)
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

/* debugfs: devmemnic/<parent device>/restart_rx_queue; write a queue index. */
static struct dentry *dmn_debugfs_root;

static ssize_t dmn_restart_rx_queue_write(struct file *file, const char __user *buf,
					  size_t len, loff_t *ppos)
{
	struct net_device *dev = file->private_data;
	unsigned int idx;
	int err;

	err = kstrtouint_from_user(buf, len, 0, &idx);
	if (err)
		return err;
	rtnl_lock();
	err = dmn_rx_queue_restart(dev, idx);
	rtnl_unlock();
	return err ? err : len;
}

static const struct file_operations dmn_restart_rx_queue_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = dmn_restart_rx_queue_write,
};

void dmn_debugfs_init(void)
{
	dmn_debugfs_root = debugfs_create_dir("devmemnic", NULL);
}

void dmn_debugfs_exit(void)
{
	debugfs_remove(dmn_debugfs_root);
}

struct dentry *dmn_debugfs_dev_add(struct net_device *dev)
{
	struct dentry *dir;

	dir = debugfs_create_dir(dev_name(dev->dev.parent), dmn_debugfs_root);
	debugfs_create_file("restart_rx_queue", 0200, dir, dev, &dmn_restart_rx_queue_fops);
	return dir;
}

void dmn_debugfs_remove(struct dentry *dir)
{
	debugfs_remove(dir);
}
