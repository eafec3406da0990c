// SPDX-License-Identifier: GPL-2.0
/*
 * Page pools and their buffers (pages, net_iovs, host fragments) and how
 * skbs take them (src/abstractions/page_pool.rs).
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/page_pool/helpers.h>

#include "devmemnic_helpers.h"

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

void *dmn_netmem_address(unsigned long netmem)
{
	return netmem_address((__force netmem_ref)netmem);
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

void dmn_pp_free_frag_va(void *va)
{
	struct page *page = virt_to_head_page(va);

	page_pool_put_full_page(page->pp, page, false);
}
