// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt lines a virtual device raises itself (src/abstractions/irq.rs,
 * which builds the chip and the domain's ops): the static inlines and macros
 * of the IRQ, IPI and cpumask APIs.
 */
#include <linux/cpumask.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/smp.h>

#include "devmemnic_helpers.h"

struct fwnode_handle *dmn_irq_domain_alloc_named_fwnode(const char *name)
{
	return irq_domain_alloc_named_fwnode(name);
}

struct irq_domain *dmn_irq_domain_create_linear(struct fwnode_handle *fwnode, unsigned int size,
						const struct irq_domain_ops *ops)
{
	return irq_domain_create_linear(fwnode, size, ops, NULL);
}

const struct cpumask *dmn_irq_effective_affinity(unsigned int irq)
{
	return irq_data_get_effective_affinity_mask(irq_get_irq_data(irq));
}

void dmn_irq_data_update_effective_affinity(struct irq_data *d, const struct cpumask *m)
{
	irq_data_update_effective_affinity(d, m);
}

void dmn_init_csd(call_single_data_t *csd, smp_call_func_t func, void *info)
{
	INIT_CSD(csd, func, info);
}

unsigned long dmn_local_irq_save(void)
{
	unsigned long flags;

	local_irq_save(flags);
	return flags;
}

void dmn_local_irq_restore(unsigned long flags)
{
	local_irq_restore(flags);
}

const struct cpumask *dmn_cpumask_of(unsigned int cpu)
{
	return cpumask_of(cpu);
}

unsigned int dmn_cpumask_first_online(const struct cpumask *m)
{
	return cpumask_first_and(m, cpu_online_mask);
}

/* The @n-th online CPU, counting round. */
unsigned int dmn_online_cpu_round_robin(unsigned int n)
{
	return cpumask_nth(n % num_online_cpus(), cpu_online_mask);
}
