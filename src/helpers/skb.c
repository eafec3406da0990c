// SPDX-License-Identifier: GPL-2.0
/*
 * Socket buffers: length, data and frags, hashes, checksum and GSO state, and
 * how the RX path marks what it built (src/abstractions/skb.rs).
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/tcp.h>
#include <net/page_pool/helpers.h>

#include "devmemnic_helpers.h"

unsigned int dmn_rx_headroom(void)
{
	return NET_SKB_PAD + NET_IP_ALIGN;
}

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
 * @mss payload bytes (the last may be shorter) behind headers the caller
 * rewrote for the whole (lengths, and the TCP checksum field holding the
 * pseudo-header sum: src/logic/gro.rs). This marks it so: header offsets
 * from skb->data (the Ethernet header: the TCP header @th_off, the IP header
 * carrying it @nh_off, a tunnel's outer IP header @outer_off, 0 for none),
 * CHECKSUM_PARTIAL, and the GSO fields. @fixed_id: the inner IPv4 ID stayed
 * fixed (SKB_GSO_TCP_FIXEDID; not set under a tunnel, whose flag for it 6.12
 * lacks).
 */
void dmn_skb_gro_complete(struct sk_buff *skb, u16 nh_off, u16 th_off, u16 outer_off,
			  bool outer_v6, bool inner_v6, u16 mss, u16 segs, bool fixed_id)
{
	const struct tcphdr *th = (const struct tcphdr *)(skb->data + th_off);
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	unsigned int type;

	skb_set_network_header(skb, outer_off ? outer_off : nh_off);
	skb_set_transport_header(skb, th_off);
	if (inner_v6) {
		type = SKB_GSO_TCPV6;
	} else {
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

/* What napi_build_skb() keeps at the end of a buffer for skb_shared_info. */
unsigned int dmn_skb_shinfo_room(void)
{
	return SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
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

/*
 * A new skb shaped like @skb, in host memory: the same headroom, linear
 * length and metadata (protocol, header offsets, checksum and GSO state),
 * its paged bytes in fresh pages; the bytes are the caller's to fill.
 */
struct sk_buff *dmn_skb_copy_shape(const struct sk_buff *skb)
{
	unsigned int headroom = skb_headroom(skb);
	struct sk_buff *n;
	int err;

	n = alloc_skb_with_frags(headroom + skb_headlen(skb), skb->data_len, 0, &err,
				 GFP_ATOMIC);
	if (!n)
		return NULL;
	skb_reserve(n, headroom);
	skb_put(n, skb_headlen(skb));
	/* (alloc_skb_with_frags() leaves the paged length to the caller.) */
	n->data_len = skb->data_len;
	n->len += skb->data_len;
	/* Same headroom: offsets from the head (headers, csum_start) hold. */
	skb_copy_header(n, skb);
	/* (Copied with the header fields; the copy's frags are host pages.) */
	n->unreadable = false;
	return n;
}

/* The kernel address of frag @i of @skb, whose frags are host pages. */
void *dmn_skb_frag_address(struct sk_buff *skb, unsigned int i)
{
	return skb_frag_address(&skb_shinfo(skb)->frags[i]);
}
