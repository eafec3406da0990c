// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: restart_rx_queue in devmemnic/<parent device>/ (src/abstractions/debugfs.rs),
 * whose writes restart an RX queue (dmn_rx_queue_restart(),
 * src/abstractions/queue_mgmt.rs) under the device's ops locks.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/netdevice.h>

#include "devmemnic_helpers.h"

/* Writing a queue index restarts that queue, under the device's ops locks. */
static ssize_t dmn_restart_rx_queue_write(struct file *file, const char __user *buf,
					  size_t len, loff_t *ppos)
{
	struct net_device *dev = file->private_data;
	unsigned int idx;
	int err;

	err = kstrtouint_from_user(buf, len, 0, &idx);
	if (err)
		return err;
	dmn_netdev_ops_lock(dev);
	err = dmn_rx_queue_restart(dev, idx);
	dmn_netdev_ops_unlock(dev);
	return err ? err : len;
}

static const struct file_operations dmn_restart_rx_queue_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = dmn_restart_rx_queue_write,
};

struct dentry *dmn_debugfs_restart_add(struct dentry *dir, struct net_device *dev)
{
	return debugfs_create_file("restart_rx_queue", 0200, dir, dev, &dmn_restart_rx_queue_fops);
}
