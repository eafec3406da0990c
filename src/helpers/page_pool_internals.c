// SPDX-License-Identifier: GPL-2.0
/*
 * What devmemnic reads of a page pool beyond its API under its ring's locks:
 * buffers still out (for keeping a devmem pool until they return).
 */
#include <linux/ptr_ring.h>
#include <net/page_pool/helpers.h>
#include <net/page_pool/types.h>

#include "devmemnic_helpers.h"

/* Buffers neither in the pool (cache, ring from consumer_head to producer) nor released. */
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
