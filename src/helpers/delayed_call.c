// SPDX-License-Identifier: GPL-2.0
/*
 * A function called later from a workqueue (src/abstractions/delayed_call.rs):
 * a delayed_work on system_long_wq (its calls may sleep and repeat for as long
 * as a process holds buffers) whose function is set when it is scheduled, and
 * which, once disabled, stays disabled.
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

/*
 * Runs @fn(@c) in about @ms milliseconds; false if already pending or
 * disabled (after dmn_delayed_call_disable_sync(), nothing queues it again).
 */
bool dmn_delayed_call_schedule(struct dmn_delayed_call *c,
			       void (*fn)(struct dmn_delayed_call *), unsigned int ms)
{
	WRITE_ONCE(c->fn, fn);
	return queue_delayed_work(system_long_wq, &c->work, msecs_to_jiffies(ms));
}

/*
 * Cancels @c, waits for a running call (which may have requeued itself) and
 * refuses every later schedule (disable_delayed_work_sync(), 6.10+): whoever
 * still holds the owner (a NAPI poll) cannot re-arm it once it is gone.
 */
void dmn_delayed_call_disable_sync(struct dmn_delayed_call *c)
{
	disable_delayed_work_sync(&c->work);
}
