// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters. 6.12's Rust `module!` has none, so they are declared in
 * C on both kernels; Rust reads them at init and range-checks them.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "devmemnic_helpers.h"

static unsigned int pairs = 1;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "Number of device pairs to create (1..16, default 1)");

static unsigned int queues = 16;
module_param(queues, uint, 0444);
MODULE_PARM_DESC(queues, "RX/TX queues per device (1..64, default 16: upstream ncdevmem binds 8..15)");

unsigned int dmn_param_pairs(void)
{
	return pairs;
}

unsigned int dmn_param_queues(void)
{
	return queues;
}
