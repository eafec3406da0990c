// SPDX-License-Identifier: GPL-2.0
/*
 * Core kernel services the Rust side calls: RCU, bottom halves, warnings,
 * delayed work (src/abstractions/delayed_call.rs).
 */
#include <linux/bottom_half.h>
#include <linux/bug.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>

#include "devmemnic_helpers.h"

void dmn_rcu_read_lock(void)
{
	rcu_read_lock();
}

void dmn_rcu_read_unlock(void)
{
	rcu_read_unlock();
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

void dmn_init_delayed_work(struct delayed_work *w, work_func_t fn)
{
	INIT_DELAYED_WORK(w, fn);
}

bool dmn_queue_delayed_work(struct workqueue_struct *wq, struct delayed_work *w, unsigned int ms)
{
	return queue_delayed_work(wq, w, msecs_to_jiffies(ms));
}
