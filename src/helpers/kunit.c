// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit's frames (src/abstractions/kunit.rs builds them): a page frag.
 */
#include <linux/skbuff.h>

#include "devmemnic_helpers.h"

void dmn_skb_add_page_frag(struct sk_buff *skb, unsigned int i, struct page *page,
			   unsigned int off, unsigned int size, unsigned int truesize)
{
	skb_add_rx_frag(skb, i, page, off, size, truesize);
}
