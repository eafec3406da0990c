// SPDX-License-Identifier: GPL-2.0
/*
 * A function called later from a workqueue (src/abstractions/delayed_call.rs):
 * a delayed_work on system_long_wq (its calls may sleep and repeat for as long
 * as a process holds buffers) whose function is set when it is scheduled.
 */
#include <linux/workqueue.h>

#include "devmemnic_helpers.h"

static void dmn_delayed_call_work(struct work_struct *work)
{
	struct dmn_delayed_call *c =
		container_of(to_delayed_work(work), struct dmn_delayed_call, work);
	void (*fn)(struct dmn_delayed_call *) = READ_ONCE(c->fn);

	if (fn)
		fn(c);
}

void dmn_delayed_call_init(struct dmn_delayed_call *c)
{
	INIT_DELAYED_WORK(&c->work, dmn_delayed_call_work);
	c->fn = NULL;
}

/* Runs @fn(@c) in about @ms milliseconds, unless already pending. */
void dmn_delayed_call_schedule(struct dmn_delayed_call *c,
			       void (*fn)(struct dmn_delayed_call *), unsigned int ms)
{
	WRITE_ONCE(c->fn, fn);
	queue_delayed_work(system_long_wq, &c->work, msecs_to_jiffies(ms));
}

/* Cancels @c and waits for a running call (which may have requeued itself). */
void dmn_delayed_call_cancel_sync(struct dmn_delayed_call *c)
{
	cancel_delayed_work_sync(&c->work);
}
