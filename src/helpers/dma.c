// SPDX-License-Identifier: GPL-2.0
/*
 * DMA (src/abstractions/dma.rs): streaming mappings, and the page behind a
 * bus address, mapped for a moment.
 */
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>

#include "devmemnic_helpers.h"

bool dmn_dma_mapping_error(struct device *dev, dma_addr_t addr)
{
	return dma_mapping_error(dev, addr);
}

u64 dmn_dma_get_mask(struct device *dev)
{
	return dma_get_mask(dev);
}

dma_addr_t dmn_dma_map_page(struct device *dev, struct page *page, size_t offset,
			    size_t size, int dir)
{
	return dma_map_page(dev, page, offset, size, dir);
}

void dmn_dma_unmap_page(struct device *dev, dma_addr_t addr, size_t size, int dir)
{
	dma_unmap_page(dev, addr, size, dir);
}

/* The page behind a dma-direct bus address on @dev, or NULL. */
struct page *dmn_dma_addr_to_page(struct device *dev, dma_addr_t addr)
{
	phys_addr_t phys;

	if (get_dma_ops(dev))
		return NULL;
	phys = dma_to_phys(dev, addr);
	if (!pfn_valid(PHYS_PFN(phys)))
		return NULL;
	return pfn_to_page(PHYS_PFN(phys));
}

void *dmn_kmap_local_page(struct page *page)
{
	return kmap_local_page(page);
}

void dmn_kunmap_local(void *addr)
{
	kunmap_local(addr);
}
