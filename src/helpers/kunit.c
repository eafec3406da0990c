// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit's frames: skbs of known bytes for the suites in src/tests/ (built
 * into every module; only the suites call them).
 */
#include <linux/etherdevice.h>
#include <linux/skbuff.h>

#include "devmemnic_helpers.h"

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
