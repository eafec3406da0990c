/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers linked into devmemnic.ko (src/helpers/): thin wrappers of static
 * inline functions and macros that bindgen cannot call, a file per subsystem
 * as rust/helpers/ has them (dma.c, irq.c, kernel.c, napi.c, netdev.c,
 * page_pool.c, ring.c, skb.c), what differs
 * between the kernels (compat.c), page-pool internals, parameters, the
 * debugfs knob and native XDP (xdp.c).
 */
#ifndef DEVMEMNIC_HELPERS_H
#define DEVMEMNIC_HELPERS_H

#include <linux/workqueue.h>
#include <linux/types.h>
#include <linux/netdevice.h>
#include <net/xdp.h>

struct device;
struct kunit;
struct page;

/* Interrupt lines a virtual device raises itself (irq.c). */
struct cpumask;
struct fwnode_handle;
struct irq_data;
struct irq_domain;
struct irq_domain_ops;
struct fwnode_handle *dmn_irq_domain_alloc_named_fwnode(const char *name);
struct irq_domain *dmn_irq_domain_create_linear(struct fwnode_handle *fwnode, unsigned int size,
						const struct irq_domain_ops *ops);
const struct cpumask *dmn_irq_effective_affinity(unsigned int irq);
void dmn_irq_data_update_effective_affinity(struct irq_data *d, const struct cpumask *m);
void dmn_init_csd(call_single_data_t *csd, smp_call_func_t func, void *info);
unsigned long dmn_local_irq_save(void);
void dmn_local_irq_restore(unsigned long flags);
const struct cpumask *dmn_cpumask_of(unsigned int cpu);
unsigned int dmn_cpumask_first_online(const struct cpumask *m);
unsigned int dmn_online_cpu_round_robin(unsigned int n);
void dmn_irq_set_movable(unsigned int virq);

/* Module parameters, as loaded (params.c); range checks are done in Rust at init. */
extern unsigned int dmn_pairs;
extern unsigned int dmn_queues;
extern unsigned int dmn_max_queues;
extern bool dmn_rss_queue_offset;
extern char *dmn_personality;

/* KUnit: fail @test with a message given as Rust `fmt::Arguments` (%pA). */
void dmn_kunit_fail(struct kunit *test, const void *fmt_args);

/* DMA. */
bool dmn_dma_mapping_error(struct device *dev, dma_addr_t addr);
u64 dmn_dma_get_mask(struct device *dev);
dma_addr_t dmn_dma_map_page(struct device *dev, struct page *page, size_t offset,
			    size_t size, int dir);
void dmn_dma_unmap_page(struct device *dev, dma_addr_t addr, size_t size, int dir);
struct page *dmn_dma_addr_to_page(struct device *dev, dma_addr_t addr);
void *dmn_kmap_local_page(struct page *page);
void dmn_kunmap_local(void *addr);

/* Net devices. */
struct net_device;
struct napi_struct;
struct ethtool_rxfh_context;
struct sk_buff;
struct page_pool;
struct ptr_ring;
struct netlink_ext_ack;

void *dmn_netdev_priv(struct net_device *dev);
struct net *dmn_dev_net(const struct net_device *dev);
void dmn_dev_hold(struct net_device *dev);
void dmn_dev_put(struct net_device *dev);
void dmn_netdev_set_parent(struct net_device *dev, struct device *parent);
void dmn_eth_hw_addr_random(struct net_device *dev);
bool dmn_netif_running(const struct net_device *dev);
void dmn_netdev_core_rx_dropped_inc(struct net_device *dev);
bool dmn_netif_carrier_ok(const struct net_device *dev);
void dmn_txq_stop(struct net_device *dev, unsigned int idx);
void dmn_txq_wake(struct net_device *dev, unsigned int idx);
bool dmn_txq_stopped(struct net_device *dev, unsigned int idx);
void dmn_tx_start_all(struct net_device *dev);

void dmn_rcu_read_lock(void);
void dmn_rcu_read_unlock(void);
struct device *dmn_netdev_parent(struct net_device *dev);
bool dmn_netif_rxfh_configured(const struct net_device *dev);
bool dmn_rxq_has_provider(struct net_device *dev, unsigned int idx);
void dmn_flush_deferred_skbs(void);
/* A kernel warning (a broken driver invariant), with a backtrace. */
void dmn_warn(const char *msg);

/* Delayed work (kernel.c). */
void dmn_init_delayed_work(struct delayed_work *w, work_func_t fn);
bool dmn_queue_delayed_work(struct workqueue_struct *wq, struct delayed_work *w, unsigned int ms);

/* compat.c: the one place that knows which kernel it is built for. */
void dmn_netdev_ops_lock(struct net_device *dev);
void dmn_netdev_ops_unlock(struct net_device *dev);
void dmn_netdev_init_netmem_tx(struct net_device *dev);
void dmn_napi_add_locked(struct net_device *dev, struct napi_struct *napi,
			 int (*poll)(struct napi_struct *napi, int budget), unsigned int index,
			 int irq);
void dmn_napi_del_locked(struct napi_struct *napi);

/* debugfs.c: restart_rx_queue in a device's directory, devmemnic/<parent device>/. */
/* Defined in Rust (src/abstractions/queue_mgmt.rs); the ops locks held. */
int dmn_rx_queue_restart(struct net_device *dev, unsigned int idx);
struct dentry;
struct dentry *dmn_debugfs_restart_add(struct dentry *dir, struct net_device *dev);
unsigned int dmn_rx_headroom(void);

/* NAPI. */
void dmn_napi_del(struct napi_struct *napi);
bool dmn_napi_schedule(struct napi_struct *napi);
struct net_device *dmn_napi_dev(struct napi_struct *napi);
int dmn_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb);

/* Socket buffers. */
/* An skb's GSO fields (skb_shared_info's gso_type, gso_size, gso_segs). */
struct dmn_gso {
	u32 type;
	u16 size;
	u16 segs;
};
bool dmn_skb_csum_partial(const struct sk_buff *skb);
void dmn_skb_set_csum_unnecessary(struct sk_buff *skb);
void dmn_skb_set_csum_complete(struct sk_buff *skb, __wsum csum);
u32 *dmn_rxfh_ctx_indir(struct ethtool_rxfh_context *ctx);
u8 *dmn_rxfh_ctx_key(struct ethtool_rxfh_context *ctx);
int dmn_skb_csum_start(const struct sk_buff *skb, u16 *field);
void dmn_skb_csum_write(struct sk_buff *skb, int start, int field);
void dmn_skb_rx_finish(struct sk_buff *skb, struct net_device *dev, u16 rxq, u32 hash,
		       bool l4_hash);
void dmn_skb_build_init(struct sk_buff *skb, unsigned int headroom, unsigned int len);
unsigned int dmn_skb_frags(const struct sk_buff *skb);
bool dmn_skb_frags_readable(const struct sk_buff *skb);
unsigned int dmn_skb_frag_size(const struct sk_buff *skb, unsigned int i);
void dmn_skb_frag_copy(const struct sk_buff *skb, unsigned int i, unsigned int off, void *to,
		       unsigned int len);
bool dmn_skb_frag_net_iov_dma(const struct sk_buff *skb, unsigned int i, dma_addr_t *addr);
const struct net_device *dmn_skb_dev(const struct sk_buff *skb);
unsigned int dmn_skb_build_size(unsigned int data_len);
void dmn_local_bh_disable(void);
void dmn_local_bh_enable(void);
u32 dmn_skb_hash(const struct sk_buff *skb, bool *l4);
struct dmn_gso dmn_skb_gso(const struct sk_buff *skb);
void dmn_skb_set_gso(struct sk_buff *skb, struct dmn_gso gso);
void dmn_skb_set_gro(struct sk_buff *skb, u16 nh_off, u16 th_off, u16 inner_nh_off,
		     __be16 inner_proto, struct dmn_gso gso);
struct sk_buff *dmn_skb_list_pop(struct sk_buff **list);
void *dmn_skb_data_mut(struct sk_buff *skb);
void dmn_skb_set_hash(struct sk_buff *skb, u32 hash, bool l4);

/* Rings of pointers (ptr_ring): producer under its lock, one consumer. */
int dmn_ring_resize(struct ptr_ring *r, unsigned int size);
unsigned int dmn_ring_count_hint(struct ptr_ring *r);
int dmn_ring_produce_max(struct ptr_ring *r, void *ptr, unsigned int max);
struct ptr_ring *dmn_ring_alloc(unsigned int size);
void dmn_ring_free(struct ptr_ring *ring);
void *dmn_ring_consume(struct ptr_ring *ring);
bool dmn_ring_empty(struct ptr_ring *ring);

/* Page pools and netmem. */
long dmn_page_pool_outstanding(struct page_pool *pool);
/* A page frag of KUnit's frames (skb.c). */
void dmn_skb_add_page_frag(struct sk_buff *skb, unsigned int i, struct page *page,
			   unsigned int off, unsigned int size, unsigned int truesize);
void dmn_pp_put_netmem(struct page_pool *pool, unsigned long netmem, bool napi_direct);
void dmn_pp_set_refs(unsigned long netmem, int nr);
void dmn_pp_drop_refs(struct page_pool *pool, unsigned long netmem, int nr);
dma_addr_t dmn_netmem_dma_addr(unsigned long netmem);
void *dmn_netmem_address(unsigned long netmem);
void *dmn_pp_alloc_frag(struct page_pool *pool, unsigned int size, unsigned int *offset,
			dma_addr_t *dma);
void dmn_pp_free_frag_va(void *va);
bool dmn_skb_coalesce_rx_frag_netmem(struct sk_buff *skb, unsigned long netmem, unsigned int off,
				     unsigned int size, unsigned int truesize);
void dmn_skb_add_rx_frag_netmem(struct sk_buff *skb, unsigned long netmem, unsigned int off,
				unsigned int size, unsigned int truesize);
void dmn_skb_add_rx_frag_va(struct sk_buff *skb, void *va, unsigned int size,
			    unsigned int truesize);


/* xdp.c: native XDP. */
struct bpf_prog;
/* An xdp_buff with the RSS hash the RX metadata kfuncs report for it. */
struct dmn_xdp_buff {
	struct xdp_buff xdp;
	u32 hash;
	u32 hash_type;
};
void dmn_skb_take_xdp_frags(struct sk_buff *skb, const struct xdp_buff *xdp, u8 nr_frags,
			    u32 size);
unsigned int dmn_xdp_headroom(void);
u32 dmn_xdp_run_prog(struct bpf_prog *prog, struct dmn_xdp_buff *buf, struct xdp_rxq_info *rxq,
		     unsigned long head, u32 len, const unsigned long *frags, const u32 *lens,
		     u32 nr);
struct sk_buff *dmn_xdp_build_skb(struct xdp_buff *xdp);
void dmn_trace_xdp_exception(struct net_device *dev, struct bpf_prog *prog, u32 act);
unsigned int dmn_current_cpu(void);

/* A link kind and the lower device a stacked device rides on (link.c). */
/*
 * The kind's attributes in IFLA_INFO_DATA (userspace's ABI: tools/link sends
 * them): IFLA_DEVMEMNIC_PEER is the peer's struct ifinfomsg followed by its
 * IFLA_IFNAME and IFLA_ADDRESS, as veth's VETH_INFO_PEER.
 */
enum {
	IFLA_DEVMEMNIC_UNSPEC,
	IFLA_DEVMEMNIC_PEER,
	__IFLA_DEVMEMNIC_MAX
};
#define IFLA_DEVMEMNIC_MAX (__IFLA_DEVMEMNIC_MAX - 1)
struct nlattr;
struct net;
struct rtnl_link_ops;
u32 dmn_nla_get_u32(const struct nlattr *nla);
void *dmn_nla_data(const struct nlattr *nla);
bool dmn_nla_is_ether_addr(const struct nlattr *nla);
void dmn_link_for_each(struct net_device *in_net_of, const struct rtnl_link_ops *ops,
		       void (*f)(struct net_device *dev, void *ctx), void *ctx);
void dmn_unregister_netdevice(struct net_device *dev);
rx_handler_result_t dmn_lower_rx_filter(struct sk_buff **pskb, struct net_device **upper,
					struct sk_buff **deliver);
struct net_device *dmn_netdev_notifier_dev(void *ptr);
int dmn_lower_xmit(struct net_device *lower, struct sk_buff *skb);
#ifdef DMN_NEWLINK_PARAMS
struct rtnl_newlink_params;
struct net *dmn_rtnl_newlink_link_net(struct rtnl_newlink_params *params);
#endif
void dmn_netdev_lockdep_set_classes(struct net_device *dev);
struct sk_buff *dmn_skb_copy_shape(const struct sk_buff *skb);
void *dmn_skb_frag_address(struct sk_buff *skb, unsigned int i);

#endif /* DEVMEMNIC_HELPERS_H */
