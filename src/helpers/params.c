// SPDX-License-Identifier: GPL-2.0
/*
 * Module parameters (src/abstractions/params.rs reads the variables): 6.12's
 * Rust `module!` has none, so they are declared in C on every kernel.
 */
#include <linux/moduleparam.h>

#include "devmemnic_helpers.h"

unsigned int dmn_pairs = 1;
module_param_named(pairs, dmn_pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "Number of device pairs to create (1..16, default 1)");

unsigned int dmn_queues = 16;
module_param_named(queues, dmn_queues, uint, 0444);
MODULE_PARM_DESC(queues, "RX/TX queues per device in use at load (1..128, default 16: upstream ncdevmem binds 8..15)");

unsigned int dmn_max_queues;
module_param_named(max_queues, dmn_max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues, "RX/TX queues per device, the most ethtool -L can use (queues..128, default 0: as many as queues)");

bool dmn_rss_queue_offset;
module_param_named(rss_queue_offset, dmn_rss_queue_offset, bool, 0444);
MODULE_PARM_DESC(rss_queue_offset, "Rules naming an RSS context add their action to the table's queue, as sfc (default off, as bnxt, mlx5, gve, fbnic)");

char *dmn_personality = "strict";
module_param_named(personality, dmn_personality, charp, 0444);
MODULE_PARM_DESC(personality, "NIC every device behaves like at creation: strict, gve, bnxt, mlx5, fbnic or fbnic-6.18 (default strict; per device: ethtool --set-priv-flags DEV personality-NAME on)");
