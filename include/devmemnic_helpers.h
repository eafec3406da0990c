/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers linked into devmemnic.ko: wrappers of static inline functions
 * and macros that bindgen cannot see, and the module parameters (6.12's Rust
 * `module!` has no parameter support).
 */
#ifndef DEVMEMNIC_HELPERS_H
#define DEVMEMNIC_HELPERS_H

#include <linux/types.h>

struct device;
struct kunit;
struct page;

/* Module parameters, as loaded; range checks are done in Rust at init. */
unsigned int dmn_param_pairs(void);
unsigned int dmn_param_queues(void);

/* KUnit: fail @test with a message given as Rust `fmt::Arguments` (%pA). */
void dmn_kunit_fail(struct kunit *test, const void *fmt_args);

/* DMA. */
bool dmn_dma_mapping_error(struct device *dev, dma_addr_t addr);
u64 dmn_dma_get_mask(struct device *dev);
dma_addr_t dmn_dma_map_page(struct device *dev, struct page *page, size_t offset,
			    size_t size, int dir);
void dmn_dma_unmap_page(struct device *dev, dma_addr_t addr, size_t size, int dir);
struct page *dmn_dma_addr_to_page(struct device *dev, dma_addr_t addr);
void *dmn_kmap_local_page(struct page *page);
void dmn_kunmap_local(void *addr);

#endif /* DEVMEMNIC_HELPERS_H */
