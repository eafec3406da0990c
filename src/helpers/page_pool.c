// SPDX-License-Identifier: GPL-2.0
/*
 * Page pools' buffers (pages, net_iovs, host fragments): returning them,
 * their addresses (src/abstractions/page_pool.rs).
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <net/page_pool/helpers.h>

#include "devmemnic_helpers.h"

void dmn_pp_put_netmem(struct page_pool *pool, unsigned long netmem, bool napi_direct)
{
	page_pool_put_full_netmem(pool, (__force netmem_ref)netmem, napi_direct);
}

/* Sets a fresh buffer's references to @nr (page_pool_fragment_netmem). */
void dmn_pp_set_refs(unsigned long netmem, int nr)
{
	page_pool_fragment_netmem((__force netmem_ref)netmem, nr);
}

/* Drops @nr references of a buffer; the last goes back to @pool. */
void dmn_pp_drop_refs(struct page_pool *pool, unsigned long netmem, int nr)
{
	if (!page_pool_unref_netmem((__force netmem_ref)netmem, nr))
		page_pool_put_unrefed_netmem(pool, (__force netmem_ref)netmem, -1, false);
}

dma_addr_t dmn_netmem_dma_addr(unsigned long netmem)
{
	return page_pool_get_dma_addr_netmem((__force netmem_ref)netmem);
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

void dmn_pp_free_frag_va(void *va)
{
	struct page *page = virt_to_head_page(va);

	page_pool_put_full_page(page->pp, page, false);
}
