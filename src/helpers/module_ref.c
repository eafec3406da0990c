// SPDX-License-Identifier: GPL-2.0
/*
 * References on this module (THIS_MODULE is only visible from C).
 */
#include <linux/module.h>

#include "devmemnic_helpers.h"

/*
 * A devmem binding's dma-buf attachment points at our parent device, and the
 * binding can outlive the net device (the netlink socket holds it): the module
 * stays loaded while any queue of ours has one.
 */
void dmn_this_module_get(void)
{
	__module_get(THIS_MODULE);
}

void dmn_this_module_put(void)
{
	module_put(THIS_MODULE);
}
