// SPDX-License-Identifier: GPL-2.0
/*
 * Socket buffers: length, data and frags, hashes, checksum and GSO state
 * (src/abstractions/skb.rs decides what to set).
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/gso.h>
#include <net/tcp.h>
#include <net/page_pool/helpers.h>

#include "devmemnic_helpers.h"

unsigned int dmn_rx_headroom(void)
{
	return NET_SKB_PAD + NET_IP_ALIGN;
}

/* The linear part to write, or NULL when a clone shares it. */
void *dmn_skb_data_mut(struct sk_buff *skb)
{
	return skb_cloned(skb) ? NULL : skb->data;
}

bool dmn_skb_csum_partial(const struct sk_buff *skb)
{
	return skb->ip_summed == CHECKSUM_PARTIAL;
}

void dmn_skb_set_csum_unnecessary(struct sk_buff *skb)
{
	skb->ip_summed = CHECKSUM_UNNECESSARY;
}

void dmn_skb_set_csum_complete(struct sk_buff *skb, __wsum csum)
{
	skb->ip_summed = CHECKSUM_COMPLETE;
	skb->csum = csum;
}

/* Where a partial checksum starts from skb->data; *@field: its offset from there. */
int dmn_skb_csum_start(const struct sk_buff *skb, u16 *field)
{
	*field = skb->csum_offset;
	return skb_checksum_start_offset(skb);
}

/* Writes the sum of @skb's bytes from @start, folded, at @field of its head. */
void dmn_skb_csum_write(struct sk_buff *skb, int start, int field)
{
	__sum16 sum = csum_fold(skb_checksum(skb, start, skb->len - start, 0));

	*(__sum16 *)(skb->data + field) = sum ?: CSUM_MANGLED_0;
}

void dmn_skb_rx_finish(struct sk_buff *skb, struct net_device *dev, u16 rxq, u32 hash,
		       bool l4_hash)
{
	skb_record_rx_queue(skb, rxq);
	if (hash)
		skb_set_hash(skb, hash, l4_hash ? PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
	skb->protocol = eth_type_trans(skb, dev);
}

/* The GSO fields of @skb; all 0 unless it is GSO. */
struct dmn_gso dmn_skb_gso(const struct sk_buff *skb)
{
	const struct skb_shared_info *shinfo = skb_shinfo(skb);
	struct dmn_gso gso = {};

	if (skb_is_gso(skb)) {
		gso.type = shinfo->gso_type;
		gso.size = shinfo->gso_size;
		gso.segs = shinfo->gso_segs;
	}
	return gso;
}

void dmn_skb_set_gso(struct sk_buff *skb, struct dmn_gso gso)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);

	shinfo->gso_type = gso.type;
	shinfo->gso_size = gso.size;
	shinfo->gso_segs = gso.segs;
}

/*
 * Marks @skb a TCP packet the device coalesced: header offsets from
 * skb->data (@inner_nh_off 0: no tunnel), CHECKSUM_PARTIAL, and @gso.
 */
void dmn_skb_set_gro(struct sk_buff *skb, u16 nh_off, u16 th_off, u16 inner_nh_off,
		     __be16 inner_proto, struct dmn_gso gso)
{
	skb_set_network_header(skb, nh_off);
	skb_set_transport_header(skb, th_off);
	if (inner_nh_off) {
		skb->encapsulation = 1;
		skb_set_inner_network_header(skb, inner_nh_off);
		skb_set_inner_transport_header(skb, th_off);
		skb_set_inner_protocol(skb, inner_proto);
	}
	skb->csum_start = skb->data + th_off - skb->head;
	skb->csum_offset = offsetof(struct tcphdr, check);
	skb->ip_summed = CHECKSUM_PARTIAL;
	dmn_skb_set_gso(skb, gso);
}

/* Unlinks the first skb of a list through ->next. */
struct sk_buff *dmn_skb_list_pop(struct sk_buff **list)
{
	struct sk_buff *skb = *list;

	if (skb) {
		*list = skb->next;
		skb_mark_not_on_list(skb);
	}
	return skb;
}

u32 dmn_skb_hash(const struct sk_buff *skb, bool *l4)
{
	*l4 = skb->l4_hash;
	return skb->hash;
}

void dmn_skb_set_hash(struct sk_buff *skb, u32 hash, bool l4)
{
	skb_set_hash(skb, hash, l4 ? PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
}

/* A new skb on a pool buffer: recycled when freed, @len bytes after @headroom. */
void dmn_skb_build_init(struct sk_buff *skb, unsigned int headroom, unsigned int len)
{
	skb_mark_for_recycle(skb);
	skb_reserve(skb, headroom);
	skb_put(skb, len);
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

/* Copies @len bytes at @off of host-memory frag @i to @to, a page at a time. */
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

/* The bus address of frag @i if it is a net_iov (false for a page). */
bool dmn_skb_frag_net_iov_dma(const struct sk_buff *skb, unsigned int i, dma_addr_t *addr)
{
	const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

	if (!skb_frag_is_net_iov(frag))
		return false;
	*addr = page_pool_get_dma_addr_netmem(skb_frag_netmem(frag)) + skb_frag_off(frag);
	return true;
}

const struct net_device *dmn_skb_dev(const struct sk_buff *skb)
{
	return skb->dev;
}

/* Bytes a buffer needs to hold @data_len bytes after headroom as an skb head. */
unsigned int dmn_skb_build_size(unsigned int data_len)
{
	return SKB_DATA_ALIGN(NET_SKB_PAD + NET_IP_ALIGN + data_len) +
	       SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

void dmn_skb_add_rx_frag_netmem(struct sk_buff *skb, unsigned long netmem, unsigned int off,
				unsigned int size, unsigned int truesize)
{
	skb_add_rx_frag_netmem(skb, skb_shinfo(skb)->nr_frags, (__force netmem_ref)netmem, off,
			       size, truesize);
}

/* Extends the last frag by @size bytes if it ends at @off of @netmem. */
bool dmn_skb_coalesce_rx_frag_netmem(struct sk_buff *skb, unsigned long netmem, unsigned int off,
				     unsigned int size, unsigned int truesize)
{
	int i = skb_shinfo(skb)->nr_frags;
	const skb_frag_t *last = &skb_shinfo(skb)->frags[i ? i - 1 : 0];

	if (!i || skb_frag_netmem(last) != (__force netmem_ref)netmem ||
	    skb_frag_off(last) + skb_frag_size(last) != off)
		return false;
	skb_coalesce_rx_frag(skb, i - 1, size, truesize);
	return true;
}

/* Appends a page-pool fragment of a host page (from dmn_pp_alloc_frag) as a frag. */
void dmn_skb_add_rx_frag_va(struct sk_buff *skb, void *va, unsigned int size,
			    unsigned int truesize)
{
	struct page *page = virt_to_head_page(va);

	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page, va - page_address(page), size,
			truesize);
}

/* A new host-memory skb shaped like @skb (headroom, lengths, metadata), unfilled. */
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
	skb_copy_header(n, skb);
	n->unreadable = false;
	return n;
}

void *dmn_skb_frag_address(struct sk_buff *skb, unsigned int i)
{
	return skb_frag_address(&skb_shinfo(skb)->frags[i]);
}

/* Appends @size bytes of @page from @off as frag @i (KUnit's frames: src/abstractions/kunit.rs). */
void dmn_skb_add_page_frag(struct sk_buff *skb, unsigned int i, struct page *page,
			   unsigned int off, unsigned int size, unsigned int truesize)
{
	skb_add_rx_frag(skb, i, page, off, size, truesize);
}
