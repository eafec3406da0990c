// SPDX-License-Identifier: GPL-2.0
/*
 * The skb ring between a sender and an RX queue's NAPI (a ptr_ring; see
 * src/abstractions/ring.rs). Resizing keeps every queued frame, which
 * ptr_ring_resize() does not: it holds both ring locks around
 * __ptr_ring_swap_queue(), which only C can take.
 */
#include <linux/ptr_ring.h>
#include <linux/slab.h>

#include "devmemnic_helpers.h"

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
