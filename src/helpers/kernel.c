// SPDX-License-Identifier: GPL-2.0
/*
 * Core kernel services the Rust side calls: sleeping, time, RCU and rtnl
 * locks, bottom halves, device references, warnings.
 */
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/rcupdate.h>
#include <linux/rtnetlink.h>
#include <linux/timekeeping.h>
#include <linux/bottom_half.h>
#include <linux/bug.h>
#include <linux/version.h>

#include "devmemnic_helpers.h"

void dmn_msleep(unsigned int ms)
{
	msleep(ms);
}

void dmn_rcu_read_lock(void)
{
	rcu_read_lock();
}

void dmn_rcu_read_unlock(void)
{
	rcu_read_unlock();
}

void dmn_device_get(struct device *dev)
{
	get_device(dev);
}

void dmn_rtnl_lock(void)
{
	rtnl_lock();
}

void dmn_rtnl_unlock(void)
{
	rtnl_unlock();
}

u64 dmn_ktime_ns(void)
{
	return ktime_get_ns();
}

void dmn_warn(const char *msg)
{
	WARN(1, "%s\n", msg);
}

void dmn_local_bh_disable(void)
{
	local_bh_disable();
}

void dmn_local_bh_enable(void)
{
	local_bh_enable();
}

/* The running kernel's version, as LINUX_VERSION_CODE (major << 16 | minor << 8). */
unsigned int dmn_kernel_version(void)
{
	return LINUX_VERSION_CODE;
}
