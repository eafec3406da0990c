/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers linked into devmemnic.ko (src/helpers/): thin wrappers of static
 * inline functions and macros that bindgen cannot call, a file per subsystem
 * as rust/helpers/ has them (dma.c, kernel.c, napi.c, netdev.c,
 * page_pool.c, ring.c, skb.c, and kunit.c's test frames), what differs
 * between the kernels (compat.c), page-pool internals, the deferred skb
 * flush, module references, parameters, the debugfs knob, delayed calls,
 * the queues' interrupt lines (irq_lines.c) and native XDP (xdp.c).
 */
#ifndef DEVMEMNIC_HELPERS_H
#define DEVMEMNIC_HELPERS_H

#include <linux/workqueue.h>
#include <linux/types.h>
#include <linux/netdevice.h>

struct device;
struct kunit;
struct page;

/* Interrupt lines a virtual device raises itself (irq_lines.c). */
struct dmn_irq_domain;
struct dmn_irq_line;
struct dmn_irq_domain *dmn_irq_domain_create(const char *name, unsigned int lines);
void dmn_irq_domain_put(struct dmn_irq_domain *d);
struct dmn_irq_line *dmn_irq_line_request(struct dmn_irq_domain *d, unsigned int hwirq,
					  const char *name, void (*handler)(void *ctx), void *ctx);
unsigned int dmn_irq_line_number(const struct dmn_irq_line *l);
void dmn_irq_line_raise(struct dmn_irq_line *l);
void dmn_irq_line_free(struct dmn_irq_line *l);
void dmn_irq_set_movable(unsigned int virq);

/* Module parameters, as loaded; range checks are done in Rust at init. */
unsigned int dmn_param_pairs(void);
unsigned int dmn_param_queues(void);
unsigned int dmn_param_max_queues(void);
bool dmn_param_rss_queue_offset(void);
const char *dmn_param_personality(void);
size_t dmn_param_personality_len(void);
unsigned int dmn_kernel_version(void);

/* KUnit: fail @test with a message given as Rust `fmt::Arguments` (%pA). */
void dmn_kunit_fail(struct kunit *test, const void *fmt_args);
void dmn_msleep(unsigned int ms);

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
void dmn_device_get(struct device *dev);
void dmn_flush_deferred_skbs(void);
/* A kernel warning (a broken driver invariant), with a backtrace. */
void dmn_warn(const char *msg);

/* Delayed calls (delayed_call.c). */
struct dmn_delayed_call {
	struct delayed_work work;
	void (*fn)(struct dmn_delayed_call *c);
};
void dmn_delayed_call_init(struct dmn_delayed_call *c);
bool dmn_delayed_call_schedule(struct dmn_delayed_call *c,
			       void (*fn)(struct dmn_delayed_call *), unsigned int ms);
void dmn_delayed_call_disable_sync(struct dmn_delayed_call *c);

void dmn_this_module_get(void);
void dmn_this_module_put(void);
void dmn_rtnl_lock(void);
void dmn_rtnl_unlock(void);

/* compat.c: the one place that knows which kernel it is built for. */
void dmn_netdev_ops_lock(struct net_device *dev);
void dmn_netdev_ops_unlock(struct net_device *dev);
void dmn_netdev_init_netmem_tx(struct net_device *dev);
void dmn_napi_add_locked(struct net_device *dev, struct napi_struct *napi,
			 int (*poll)(struct napi_struct *napi, int budget), unsigned int index,
			 int irq);
void dmn_napi_del_locked(struct napi_struct *napi);

/*
 * debugfs.c: devmemnic/<parent device>/restart_rx_queue restarts an RX queue
 * the way the core does on bind and unbind. Without debugfs these do nothing
 * (ERR_PTR dentries are accepted by remove).
 */
/* Defined in Rust (src/abstractions/queue_mgmt.rs); the ops locks held. */
int dmn_rx_queue_restart(struct net_device *dev, unsigned int idx);
struct dentry;
struct dentry *dmn_debugfs_init(void);
struct dentry *dmn_debugfs_dev_add(struct dentry *root, struct net_device *dev);
void dmn_debugfs_remove(struct dentry *dir);
u64 dmn_default_features(void);
u64 dmn_feature_gro_hw(void);
u64 dmn_ktime_ns(void);
u64 dmn_feature_ntuple(void);
unsigned int dmn_rx_headroom(void);
u8 dmn_rss_hash_top(void);

/* NAPI. */
void dmn_napi_del(struct napi_struct *napi);
bool dmn_napi_schedule(struct napi_struct *napi);
struct net_device *dmn_napi_dev(struct napi_struct *napi);
int dmn_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb);

/* Socket buffers. */
unsigned int dmn_skb_len(const struct sk_buff *skb);
unsigned int dmn_skb_headlen(const struct sk_buff *skb);
const void *dmn_skb_data(const struct sk_buff *skb);
u16 dmn_skb_queue_mapping(const struct sk_buff *skb);
bool dmn_skb_csum_partial(const struct sk_buff *skb);
void dmn_skb_set_csum_unnecessary(struct sk_buff *skb);
u32 *dmn_rxfh_ctx_indir(struct ethtool_rxfh_context *ctx);
u8 *dmn_rxfh_ctx_key(struct ethtool_rxfh_context *ctx);
void dmn_skb_fill_tx_csum(struct sk_buff *skb, const struct sk_buff *frame);
void dmn_skb_rx_finish(struct sk_buff *skb, struct net_device *dev, u16 rxq, u32 hash,
		       bool l4_hash);
void dmn_skb_mark_for_recycle(struct sk_buff *skb);
void *dmn_skb_put(struct sk_buff *skb, unsigned int len);
void dmn_skb_reserve(struct sk_buff *skb, int len);
unsigned int dmn_skb_frags(const struct sk_buff *skb);
bool dmn_skb_frags_readable(const struct sk_buff *skb);
unsigned int dmn_skb_frag_size(const struct sk_buff *skb, unsigned int i);
void dmn_skb_frag_copy(const struct sk_buff *skb, unsigned int i, unsigned int off, void *to,
		       unsigned int len);
bool dmn_skb_frag_net_iov_dma(const struct sk_buff *skb, unsigned int i, dma_addr_t *addr);
const struct net_device *dmn_skb_dev(const struct sk_buff *skb);
void dmn_kfree_skb_any(struct sk_buff *skb);
void dmn_consume_skb_any(struct sk_buff *skb);
unsigned int dmn_skb_build_size(unsigned int data_len);
unsigned int dmn_skb_shinfo_room(void);
void dmn_local_bh_disable(void);
void dmn_local_bh_enable(void);
u32 dmn_skb_hash(const struct sk_buff *skb);
void dmn_skb_copy_gso(struct sk_buff *to, const struct sk_buff *from);
unsigned int dmn_skb_gso_segs(const struct sk_buff *skb);
void dmn_skb_gro_complete(struct sk_buff *skb, u16 nh_off, u16 th_off, u16 outer_off,
			  bool outer_v6, bool inner_v6, u16 mss, u16 segs, bool fixed_id);
void *dmn_skb_data_mut(struct sk_buff *skb);
bool dmn_skb_l4_hash(const struct sk_buff *skb);
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
struct page_pool *dmn_page_pool_create(struct device *dma_dev, struct napi_struct *napi,
				       struct net_device *netdev, unsigned int queue_idx,
				       unsigned int pool_size, unsigned int order,
				       bool allow_unreadable);
void dmn_page_pool_destroy(struct page_pool *pool);
bool dmn_page_pool_has_provider(const struct page_pool *pool);
bool dmn_page_pool_allows_unreadable(const struct page_pool *pool);
long dmn_page_pool_outstanding(struct page_pool *pool);
void dmn_page_pool_debug(struct page_pool *pool);
int dmn_page_pool_queue(const struct page_pool *pool, struct net_device **dev);
struct sk_buff *dmn_alloc_test_frame(unsigned int len);
struct sk_buff *dmn_alloc_test_frame_frags(unsigned int head, unsigned int nr,
					   unsigned int frag_len);
unsigned long dmn_pp_alloc_netmem(struct page_pool *pool);
void dmn_pp_put_netmem(struct page_pool *pool, unsigned long netmem, bool napi_direct);
dma_addr_t dmn_netmem_dma_addr(unsigned long netmem);
bool dmn_netmem_is_net_iov(unsigned long netmem);
void *dmn_netmem_address(unsigned long netmem);
void *dmn_pp_alloc_frag(struct page_pool *pool, unsigned int size, unsigned int *offset,
			dma_addr_t *dma);
void dmn_pp_free_frag(struct page_pool *pool, void *va);
void dmn_pp_free_frag_va(void *va);
void dmn_skb_add_rx_frag_netmem(struct sk_buff *skb, unsigned long netmem, unsigned int off,
				unsigned int size, unsigned int truesize);
void dmn_skb_add_rx_frag_va(struct sk_buff *skb, void *va, unsigned int size,
			    unsigned int truesize);


/* xdp.c: native XDP. */
struct bpf_prog;
struct netdev_bpf;
struct xdp_rxq_info;
struct xdp_buff;
void dmn_skb_take_xdp_frags(struct sk_buff *skb, const struct xdp_buff *xdp, u8 nr_frags,
			    u32 size);
void dmn_bpf_prog_put(struct bpf_prog *prog);
bool dmn_bpf_prog_has_frags(const struct bpf_prog *prog);
unsigned int dmn_xdp_headroom(void);
unsigned int dmn_xdp_tailroom(void);
unsigned int dmn_xdp_max_frags(void);
struct xdp_rxq_info *dmn_xdp_rxq_register(struct net_device *dev, u32 queue,
					  struct page_pool *pool);
void dmn_xdp_rxq_unregister(struct xdp_rxq_info *rxq);
u32 dmn_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq, unsigned long head, u32 len,
		const unsigned long *frags, const u32 *lens, u32 nr, u32 hash,
		u32 hash_type, struct sk_buff **skb_out);
void dmn_xdp_flush(void);
struct xdp_frame;
struct sk_buff *dmn_xdp_frame_to_skb(struct xdp_frame *frame, struct net_device *dev);
unsigned int dmn_current_cpu(void);
struct sk_buff *dmn_skb_offloads_in_software(struct sk_buff *skb);
struct sk_buff *dmn_skb_list_pop(struct sk_buff **list);
void dmn_skb_set_queue_mapping(struct sk_buff *skb, u16 queue);
void dmn_netdev_set_xdp_features(struct net_device *dev);
bool dmn_netdev_bpf_is_setup_prog(const struct netdev_bpf *bpf);
struct bpf_prog *dmn_netdev_bpf_prog(const struct netdev_bpf *bpf);
struct netlink_ext_ack *dmn_netdev_bpf_extack(const struct netdev_bpf *bpf);

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
