// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt lines a virtual device raises itself, one per RX queue.
 *
 * A real NIC raises a queue's MSI-X vector on the CPU its affinity names, and
 * the handler schedules the queue's NAPI there. devmemnic has no hardware, so
 * each device gets its own IRQ domain (as kernel/irq/irq_sim.c makes one) whose
 * chip accepts any affinity (irq_sim's does not: /proc/irq/N/smp_affinity must
 * be writable) and a line is raised by an IPI to the CPU of its effective
 * affinity, whose handler runs the line's flow handler in hardirq context.
 * The lines are ordinary IRQs to the rest of the kernel: numbered in
 * /proc/interrupts, named, with affinity, and reported per NAPI.
 *
 * An affinity write must take effect at once, not at the line's next
 * interrupt (dmn_irq_set_movable(), compat.c).
 */
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "devmemnic_helpers.h"

/* Each line holds a reference: the domain goes with the last of them. */
struct dmn_irq_domain {
	refcount_t ref;
	struct irq_domain *domain;
	struct fwnode_handle *fwnode;
};

struct dmn_irq_line {
	call_single_data_t csd;
	struct dmn_irq_domain *domain;
	unsigned int irq;
	/* Raises not yet handled: nonzero from a raise until the IPI's function
	 * has run the handler after the last of them. */
	atomic_t in_flight;
	char *name;
	void (*handler)(void *ctx);
	void *ctx;
};

static void dmn_irq_noop(struct irq_data *d)
{
}

/* Any online CPU of the mask will do; the line is raised there. */
static int dmn_irq_set_affinity(struct irq_data *d, const struct cpumask *mask, bool force)
{
	unsigned int cpu = cpumask_first_and(mask, cpu_online_mask);

	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	irq_data_update_effective_affinity(d, cpumask_of(cpu));
	return IRQ_SET_MASK_OK;
}

static struct irq_chip dmn_irq_chip = {
	.name = "devmemnic",
	.irq_mask = dmn_irq_noop,
	.irq_unmask = dmn_irq_noop,
	.irq_set_affinity = dmn_irq_set_affinity,
};

static int dmn_irq_domain_map(struct irq_domain *d, unsigned int virq, irq_hw_number_t hw)
{
	irq_set_chip_and_handler(virq, &dmn_irq_chip, handle_simple_irq);
	irq_set_noprobe(virq);
	dmn_irq_set_movable(virq);
	return 0;
}

static void dmn_irq_domain_unmap(struct irq_domain *d, unsigned int virq)
{
	irq_set_chip_and_handler(virq, NULL, NULL);
}

static const struct irq_domain_ops dmn_irq_domain_ops = {
	.map = dmn_irq_domain_map,
	.unmap = dmn_irq_domain_unmap,
};

struct dmn_irq_domain *dmn_irq_domain_create(const char *name, unsigned int lines)
{
	struct dmn_irq_domain *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return NULL;
	refcount_set(&d->ref, 1);
	d->fwnode = irq_domain_alloc_named_fwnode(name);
	if (!d->fwnode)
		goto err;
	d->domain = irq_domain_create_linear(d->fwnode, lines, &dmn_irq_domain_ops, d);
	if (!d->domain)
		goto err_fwnode;
	return d;
err_fwnode:
	irq_domain_free_fwnode(d->fwnode);
err:
	kfree(d);
	return NULL;
}

/* Drops a reference; the last one removes the domain. Process context. */
void dmn_irq_domain_put(struct dmn_irq_domain *d)
{
	if (!refcount_dec_and_test(&d->ref))
		return;
	irq_domain_remove(d->domain);
	irq_domain_free_fwnode(d->fwnode);
	kfree(d);
}

static irqreturn_t dmn_irq_line_action(int irq, void *data)
{
	struct dmn_irq_line *l = data;

	l->handler(l->ctx);
	return IRQ_HANDLED;
}

/*
 * The raising IPI, in hardirq context on the target CPU (or, for the local
 * CPU, called directly with interrupts off). Raises that came while the
 * handler ran get another run: the handler may have looked before their event
 * (a NAPI still disabled, say), and they did not send an IPI of their own.
 */
static void dmn_irq_line_ipi(void *data)
{
	struct dmn_irq_line *l = data;
	int seen;

	do {
		seen = atomic_read(&l->in_flight);
		generic_handle_irq_safe(l->irq);
	} while (atomic_sub_return_release(seen, &l->in_flight) > 0);
}

struct dmn_irq_line *dmn_irq_line_request(struct dmn_irq_domain *d, unsigned int hwirq,
					  const char *name, void (*handler)(void *ctx), void *ctx)
{
	struct dmn_irq_line *l = kzalloc(sizeof(*l), GFP_KERNEL);
	unsigned int cpu;
	int err;

	if (!l)
		return NULL;
	l->name = kstrdup(name, GFP_KERNEL);
	if (!l->name)
		goto err;
	l->handler = handler;
	l->ctx = ctx;
	l->domain = d;
	INIT_CSD(&l->csd, dmn_irq_line_ipi, l);
	l->irq = irq_create_mapping(d->domain, hwirq);
	if (!l->irq)
		goto err_name;
	err = request_irq(l->irq, dmn_irq_line_action, 0, l->name, l);
	if (err)
		goto err_map;
	/* Line n on the n-th online CPU (round robin), as NICs spread their vectors. */
	cpus_read_lock();
	cpu = cpumask_nth(hwirq % num_online_cpus(), cpu_online_mask);
	if (cpu < nr_cpu_ids)
		irq_set_affinity(l->irq, cpumask_of(cpu));
	cpus_read_unlock();
	refcount_inc(&d->ref);
	return l;
err_map:
	irq_dispose_mapping(l->irq);
err_name:
	kfree(l->name);
err:
	kfree(l);
	return NULL;
}

unsigned int dmn_irq_line_number(const struct dmn_irq_line *l)
{
	return l->irq;
}

/*
 * Raises the line on the CPU of its effective affinity (this CPU if that one
 * is offline): the handler runs after this call, once for any number of
 * raises while one is in flight. Any context.
 */
void dmn_irq_line_raise(struct dmn_irq_line *l)
{
	const struct cpumask *eff;
	unsigned int cpu;

	if (atomic_inc_return_acquire(&l->in_flight) != 1)
		return;
	eff = irq_data_get_effective_affinity_mask(irq_get_irq_data(l->irq));
	cpu = cpumask_first_and(eff, cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = raw_smp_processor_id();
	if (smp_call_function_single_async(cpu, &l->csd)) {
		/* The target went offline between the check and the call. */
		unsigned long flags;

		local_irq_save(flags);
		dmn_irq_line_ipi(l);
		local_irq_restore(flags);
	}
}

/* Waits for a raise in flight, frees the IRQ and the line. Process context. */
void dmn_irq_line_free(struct dmn_irq_line *l)
{
	while (atomic_read_acquire(&l->in_flight))
		msleep(1);
	free_irq(l->irq, l);
	irq_dispose_mapping(l->irq);
	dmn_irq_domain_put(l->domain);
	kfree(l->name);
	kfree(l);
}
