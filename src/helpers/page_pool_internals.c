// SPDX-License-Identifier: GPL-2.0
/*
 * What devmemnic reads of a page pool beyond its API: buffers still out (for
 * keeping a devmem pool until they return), how it was created, and a debug
 * dump. These read struct page_pool's fields, the same on 6.12 and 7.2.
 */
#include <linux/ptr_ring.h>
#include <net/page_pool/helpers.h>
#include <net/page_pool/types.h>

#include "devmemnic_helpers.h"

bool dmn_page_pool_has_provider(const struct page_pool *pool)
{
	return pool->mp_priv != NULL;
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
