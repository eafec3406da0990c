// SPDX-License-Identifier: GPL-2.0
/*
 * Thin wrappers of static inline functions and macros that bindgen cannot
 * call, one per function, as rust/helpers/ does; see include/devmemnic_helpers.h.
 * Differences between kernels are in compat.c, not here.
 */
#include <linux/dma-direct.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/ptr_ring.h>
#include <linux/skbuff.h>
#include <linux/timekeeping.h>
#include <net/ip6_checksum.h>
#include <net/tcp.h>
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

#include "devmemnic_helpers.h"

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

void dmn_device_get(struct device *dev)
{
	get_device(dev);
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

u64 dmn_feature_gro_hw(void)
{
	return NETIF_F_GRO_HW;
}

u64 dmn_ktime_ns(void)
{
	return ktime_get_ns();
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

int dmn_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb)
{
	return napi_gro_receive(napi, skb);
}

void dmn_warn(const char *msg)
{
	WARN(1, "%s\n", msg);
}

void dmn_napi_del(struct napi_struct *napi)
{
	netif_napi_del(napi);
}

bool dmn_napi_schedule(struct napi_struct *napi)
{
	return napi_schedule(napi);
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

/* The linear part to write, or NULL when a clone shares it. */
void *dmn_skb_data_mut(struct sk_buff *skb)
{
	return skb_cloned(skb) ? NULL : skb->data;
}

u16 dmn_skb_queue_mapping(const struct sk_buff *skb)
{
	return skb_get_queue_mapping(skb);
}

bool dmn_skb_csum_partial(const struct sk_buff *skb)
{
	return skb->ip_summed == CHECKSUM_PARTIAL;
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

void dmn_skb_set_csum_unnecessary(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
}

/*
 * The device's TX checksum offload, done where the frame lands: writes the
 * L4 checksum that @frame's sender left to the device (CHECKSUM_PARTIAL)
 * into @skb, the same frame as received, as a NIC writes it on the wire
 * (0xffff for a zero sum, CSUM_MANGLED_0, as skb_checksum_help() does).
 * Done on the receiver's copy, which this device owns, rather than on the
 * sent skb, which TCP shares with its retransmit queue. A GSO frame stands
 * for segments whose sums nobody reads (it is received whole, as GRO would
 * merge them), and device memory is not readable by the CPU: both keep the
 * sender's partial sum, as does a field outside the linear part.
 */
void dmn_skb_fill_tx_csum(struct sk_buff *skb, const struct sk_buff *frame)
{
	int start = skb_checksum_start_offset(frame);
	int field = start + frame->csum_offset;
	__wsum csum;

	if (frame->ip_summed != CHECKSUM_PARTIAL || skb_is_gso(frame) ||
	    !skb_frags_readable(skb) || start < 0 || field + sizeof(__sum16) > skb_headlen(skb))
		return;
	csum = skb_checksum(skb, start, skb->len - start, 0);
	*(__sum16 *)(skb->data + field) = csum_fold(csum) ?: CSUM_MANGLED_0;
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

/*
 * Receive coalescing's last step, as tcp_gro_complete() ends the kernel's GRO
 * and bnxt and mlx5 end their hardware GRO: @skb holds @segs TCP segments of
 * @mss payload bytes (the last may be shorter) behind headers whose lengths
 * the caller rewrote. Offsets are from skb->data (the Ethernet header): the
 * TCP header @th_off, the IP header carrying it @nh_off, a tunnel's outer IP
 * header @outer_off (0: none). The TCP checksum becomes the pseudo-header
 * sum with CHECKSUM_PARTIAL, as GRO leaves it: every segment's sum was
 * verified, and the stack may segment the packet again. @fixed_id: the inner
 * IPv4 ID stayed fixed (SKB_GSO_TCP_FIXEDID; not set under a tunnel, whose
 * flag for it 6.12 lacks).
 */
void dmn_skb_gro_complete(struct sk_buff *skb, u16 nh_off, u16 th_off, u16 outer_off,
			  bool outer_v6, bool inner_v6, u16 mss, u16 segs, bool fixed_id)
{
	struct tcphdr *th = (struct tcphdr *)(skb->data + th_off);
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	unsigned int len = skb->len - th_off;
	unsigned int type;

	skb_set_network_header(skb, outer_off ? outer_off : nh_off);
	skb_set_transport_header(skb, th_off);
	if (inner_v6) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)(skb->data + nh_off);

		th->check = ~tcp_v6_check(len, &ip6->saddr, &ip6->daddr, 0);
		type = SKB_GSO_TCPV6;
	} else {
		const struct iphdr *ip = (const struct iphdr *)(skb->data + nh_off);

		th->check = ~tcp_v4_check(len, ip->saddr, ip->daddr, 0);
		type = SKB_GSO_TCPV4;
		if (fixed_id && !outer_off)
			type |= SKB_GSO_TCP_FIXEDID;
	}
	if (outer_off) {
		skb->encapsulation = 1;
		skb_set_inner_network_header(skb, nh_off);
		skb_set_inner_transport_header(skb, th_off);
		skb_set_inner_protocol(skb, htons(inner_v6 ? ETH_P_IPV6 : ETH_P_IP));
		type |= outer_v6 ? SKB_GSO_IPXIP6 : SKB_GSO_IPXIP4;
	}
	if (th->cwr)
		type |= SKB_GSO_TCP_ECN;
	skb->csum_start = (unsigned char *)th - skb->head;
	skb->csum_offset = offsetof(struct tcphdr, check);
	skb->ip_summed = CHECKSUM_PARTIAL;
	shinfo->gso_size = mss;
	shinfo->gso_segs = segs;
	shinfo->gso_type = type;
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

bool dmn_skb_frags_readable(const struct sk_buff *skb)
{
	return skb_frags_readable(skb);
}

unsigned int dmn_skb_frag_size(const struct sk_buff *skb, unsigned int i)
{
	return skb_frag_size(&skb_shinfo(skb)->frags[i]);
}

/*
 * Copies @len bytes of page frag @i of @skb, from @off into the frag, to @to:
 * one local mapping per source page (a frag may span several pages of a
 * compound page). The frag must be host memory and hold @off + @len bytes.
 */
void dmn_skb_frag_copy(const struct sk_buff *skb, unsigned int i, unsigned int off, void *to,
		       unsigned int len)
{
	const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];
	u32 p_off, p_len, copied;
	struct page *p;

	skb_frag_foreach_page(frag, skb_frag_off(frag) + off, len, p, p_off, p_len, copied) {
		void *va = kmap_local_page(p);

		memcpy(to + copied, va + p_off, p_len);
		kunmap_local(va);
	}
}

/*
 * Frag @i of @skb when it is a net_iov (device memory): the bus address of
 * its first byte on the device its owner mapped it for (for devmem TX, the
 * device bind-tx attached the dma-buf to). False for a page frag.
 */
bool dmn_skb_frag_net_iov_dma(const struct sk_buff *skb, unsigned int i, dma_addr_t *addr)
{
	const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

	if (!skb_frag_is_net_iov(frag))
		return false;
	*addr = page_pool_get_dma_addr_netmem(skb_frag_netmem(frag)) + skb_frag_off(frag);
	return true;
}

/* The device an skb is sent on or received by (compared, not dereferenced). */
const struct net_device *dmn_skb_dev(const struct sk_buff *skb)
{
	return skb->dev;
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
	return SKB_DATA_ALIGN(NET_SKB_PAD + NET_IP_ALIGN + data_len) + dmn_skb_shinfo_room();
}

void dmn_local_bh_disable(void)
{
	local_bh_disable();
}

void dmn_local_bh_enable(void)
{
	local_bh_enable();
}

/* What napi_build_skb() keeps at the end of a buffer for skb_shared_info. */
unsigned int dmn_skb_shinfo_room(void)
{
	return SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
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

/*
 * Entries queued, under the producer lock (the consumer may take some
 * meanwhile: the count is an upper bound).
 */
static unsigned int dmn_ring_count(struct ptr_ring *r)
{
	int head = READ_ONCE(r->consumer_head);

	if (!READ_ONCE(r->queue[head]))
		return 0;
	return (READ_ONCE(r->producer) - head + r->size) % r->size ?: r->size;
}

unsigned int dmn_ring_count_hint(struct ptr_ring *r)
{
	unsigned long flags;
	unsigned int n;

	/*
	 * (The producer lock keeps a resize from swapping the queue under us;
	 * xmit calls this too: IRQs off, as in dmn_ring_produce_max().)
	 */
	spin_lock_irqsave(&r->producer_lock, flags);
	n = dmn_ring_count(r);
	spin_unlock_irqrestore(&r->producer_lock, flags);
	return n;
}

/*
 * Resizes @r to @size entries keeping every queued frame in order, or fails
 * with -EBUSY, leaving the ring as it was, if more than @size are queued: a
 * NIC does not drop frames it accepted because its ring shrank. (Entries are
 * queued from consumer_head to producer; a full ring has both equal and its
 * head slot taken.)
 */
int dmn_ring_resize(struct ptr_ring *r, unsigned int size)
{
	void **queue, **old;
	unsigned long flags;
	unsigned int count;

	if (!size || size > KMALLOC_MAX_SIZE / sizeof(void *))
		return -EINVAL;
	queue = kvmalloc_array(size, sizeof(void *), GFP_KERNEL | __GFP_ZERO);
	if (!queue)
		return -ENOMEM;
	spin_lock_irqsave(&r->consumer_lock, flags);
	spin_lock(&r->producer_lock);
	count = dmn_ring_count(r);
	if (count > size) {
		spin_unlock(&r->producer_lock);
		spin_unlock_irqrestore(&r->consumer_lock, flags);
		kvfree(queue);
		return -EBUSY;
	}
	old = __ptr_ring_swap_queue(r, queue, size, GFP_ATOMIC, NULL);
	spin_unlock(&r->producer_lock);
	spin_unlock_irqrestore(&r->consumer_lock, flags);
	kvfree(old);
	return 0;
}

/*
 * Adds @ptr unless @max or more entries are queued (-ENOSPC) or the ring is
 * full. Producers are ndo_start_xmit calls of the peer's TX queues, which
 * netpoll (netconsole) makes with hard IRQs off, possibly interrupting
 * another TX queue's xmit on the same CPU: the producer lock is taken with
 * IRQs off (a _bh unlock would enable softirqs with IRQs disabled).
 */
int dmn_ring_produce_max(struct ptr_ring *r, void *ptr, unsigned int max)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&r->producer_lock, flags);
	if (dmn_ring_count(r) >= max)
		ret = -ENOSPC;
	else
		ret = __ptr_ring_produce(r, ptr);
	spin_unlock_irqrestore(&r->producer_lock, flags);
	return ret;
}

/* Consumers are NAPI polls and process context: the _bh variants. */

void *dmn_ring_consume(struct ptr_ring *ring)
{
	return ptr_ring_consume_bh(ring);
}

bool dmn_ring_empty(struct ptr_ring *ring)
{
	return ptr_ring_empty_bh(ring);
}

/* Page pools. */

struct page_pool *dmn_page_pool_create(struct device *dma_dev, struct napi_struct *napi,
				       struct net_device *netdev, unsigned int queue_idx,
				       unsigned int pool_size, unsigned int order,
				       bool allow_unreadable)
{
	struct page_pool_params pp = {
		.order = order,
		.pool_size = pool_size,
		.nid = NUMA_NO_NODE,
		.dev = dma_dev,
		.napi = napi,
		.dma_dir = DMA_FROM_DEVICE,
		.max_len = PAGE_SIZE << order,
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

/*
 * A frame for tests: @head bytes in the linear part, then @nr page frags of
 * @frag_len bytes, each at offset 100 of its own page; byte k of the frame
 * is (k * 7) % 251.
 */
struct sk_buff *dmn_alloc_test_frame_frags(unsigned int head, unsigned int nr,
					   unsigned int frag_len)
{
	unsigned int i, k, pos = 0;
	struct sk_buff *skb;
	u8 *data;

	if (head < ETH_HLEN || nr > MAX_SKB_FRAGS || frag_len > PAGE_SIZE - 100)
		return NULL;
	skb = alloc_skb(head, GFP_KERNEL);
	if (!skb)
		return NULL;
	data = skb_put(skb, head);
	for (k = 0; k < head; k++)
		data[k] = (pos++ * 7) % 251;
	for (i = 0; i < nr; i++) {
		struct page *page = alloc_page(GFP_KERNEL);

		if (!page) {
			kfree_skb(skb);
			return NULL;
		}
		data = page_address(page);
		for (k = 0; k < frag_len; k++)
			data[100 + k] = (pos++ * 7) % 251;
		skb_add_rx_frag(skb, i, page, 100, frag_len, PAGE_SIZE);
	}
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

/* Appends a page-pool fragment of a host page (from dmn_pp_alloc_frag) as a frag. */
void dmn_skb_add_rx_frag_va(struct sk_buff *skb, void *va, unsigned int size,
			    unsigned int truesize)
{
	struct page *page = virt_to_head_page(va);

	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, va - page_address(page), size,
			truesize);
}

