// SPDX-License-Identifier: GPL-2.0
/*
 * The skb ring between a sender and an RX queue's NAPI (src/abstractions/ring.rs,
 * which says why): a ptr_ring whose producer lock is taken with IRQs off and
 * whose resize holds both of its locks.
 */
#include <linux/ptr_ring.h>
#include <linux/slab.h>

#include "devmemnic_helpers.h"

struct ptr_ring *dmn_ring_alloc(unsigned int size)
{
	struct ptr_ring *ring = kzalloc(sizeof(*ring), GFP_KERNEL);

	if (ring && ptr_ring_init(ring, size, GFP_KERNEL)) {
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

/* Entries queued from consumer_head to producer (full: both equal, head taken). */
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

	spin_lock_irqsave(&r->producer_lock, flags);
	n = dmn_ring_count(r);
	spin_unlock_irqrestore(&r->producer_lock, flags);
	return n;
}

int dmn_ring_resize(struct ptr_ring *r, unsigned int size)
{
	void **queue, **old;
	unsigned long flags;
	bool fits;

	if (!size || size > KMALLOC_MAX_SIZE / sizeof(void *))
		return -EINVAL;
	queue = kvmalloc_array(size, sizeof(void *), GFP_KERNEL | __GFP_ZERO);
	if (!queue)
		return -ENOMEM;
	spin_lock_irqsave(&r->consumer_lock, flags);
	spin_lock(&r->producer_lock);
	fits = dmn_ring_count(r) <= size;
	old = fits ? __ptr_ring_swap_queue(r, queue, size, GFP_ATOMIC, NULL) : queue;
	spin_unlock(&r->producer_lock);
	spin_unlock_irqrestore(&r->consumer_lock, flags);
	kvfree(old);
	return fits ? 0 : -EBUSY;
}

int dmn_ring_produce_max(struct ptr_ring *r, void *ptr, unsigned int max)
{
	unsigned long flags;
	int ret = -ENOSPC;

	spin_lock_irqsave(&r->producer_lock, flags);
	if (dmn_ring_count(r) < max)
		ret = __ptr_ring_produce(r, ptr);
	spin_unlock_irqrestore(&r->producer_lock, flags);
	return ret;
}

void *dmn_ring_consume(struct ptr_ring *ring)
{
	return ptr_ring_consume_bh(ring);
}

bool dmn_ring_empty(struct ptr_ring *ring)
{
	return ptr_ring_empty_bh(ring);
}
