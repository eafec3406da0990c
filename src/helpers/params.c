// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters. 6.12's Rust `module!` has none, so they are declared in
 * C on both kernels; Rust reads them at init and range-checks them.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "devmemnic_helpers.h"

static unsigned int pairs = 1;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "Number of device pairs to create (1..16, default 1)");

static unsigned int queues = 16;
module_param(queues, uint, 0444);
MODULE_PARM_DESC(queues, "RX/TX queues per device in use at load (1..128, default 16: upstream ncdevmem binds 8..15)");

static unsigned int max_queues;
module_param(max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues, "RX/TX queues per device, the most ethtool -L can use (queues..128, default 0: as many as queues)");

static bool rss_queue_offset;
module_param(rss_queue_offset, bool, 0444);
MODULE_PARM_DESC(rss_queue_offset, "Rules naming an RSS context add their action to the table's queue, as sfc (default off, as bnxt, mlx5, gve, fbnic)");

static char *personality = "strict";
module_param(personality, charp, 0444);
MODULE_PARM_DESC(personality, "NIC every device behaves like at creation: strict, gve, bnxt, mlx5 or fbnic (default strict; per device: ethtool --set-priv-flags DEV personality-NAME on)");

unsigned int dmn_param_pairs(void)
{
	return pairs;
}

unsigned int dmn_param_queues(void)
{
	return queues;
}

unsigned int dmn_param_max_queues(void)
{
	return max_queues;
}

bool dmn_param_rss_queue_offset(void)
{
	return rss_queue_offset;
}

const char *dmn_param_personality(void)
{
	return personality ? personality : "";
}

size_t dmn_param_personality_len(void)
{
	return strlen(dmn_param_personality());
}
