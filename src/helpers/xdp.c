// SPDX-License-Identifier: GPL-2.0
/*
 * Native XDP: a program's reference, the per-queue rxq info (page-pool
 * memory model), and one run of a program over a frame the driver placed in
 * host page-pool pages, with what follows its verdict (an skb to pass or
 * send back, or the pages back to the pool).
 */
#include <linux/bpf.h>
#include <linux/bpf_trace.h>
#include <linux/etherdevice.h>
#include <linux/filter.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <net/gso.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>

#include "devmemnic_helpers.h"

void dmn_bpf_prog_put(struct bpf_prog *prog)
{
	bpf_prog_put(prog);
}

bool dmn_bpf_prog_has_frags(const struct bpf_prog *prog)
{
	return prog->aux->xdp_has_frags;
}

unsigned int dmn_xdp_headroom(void)
{
	/*
	 * XDP_PACKET_HEADROOM of room a program may grow the head into, plus
	 * what the xdp_frame written there on conversion takes, so the whole
	 * 256 bytes stay usable (xdp.py grows the head by 256).
	 */
	return XDP_PACKET_HEADROOM + NET_SKB_PAD;
}

unsigned int dmn_xdp_tailroom(void)
{
	return SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

unsigned int dmn_xdp_max_frags(void)
{
	return MAX_SKB_FRAGS;
}

struct xdp_rxq_info *dmn_xdp_rxq_register(struct net_device *dev, u32 queue,
					  struct page_pool *pool)
{
	struct xdp_rxq_info *rxq = kzalloc(sizeof(*rxq), GFP_KERNEL);
	int err;

	if (!rxq)
		return ERR_PTR(-ENOMEM);
	/* Frags are whole host pages of the pool (what tail growth checks). */
	err = __xdp_rxq_info_reg(rxq, dev, queue, 0, PAGE_SIZE);
	if (err)
		goto free;
	err = xdp_rxq_info_reg_mem_model(rxq, MEM_TYPE_PAGE_POOL, pool);
	if (err)
		goto unreg;
	return rxq;
unreg:
	xdp_rxq_info_unreg(rxq);
free:
	kfree(rxq);
	return ERR_PTR(err);
}

void dmn_xdp_rxq_unregister(struct xdp_rxq_info *rxq)
{
	xdp_rxq_info_unreg(rxq);
	kfree(rxq);
}

static struct sk_buff *dmn_xdp_build_skb(struct xdp_buff *xdp)
{
	struct skb_shared_info *sinfo = xdp_get_shared_info_from_buff(xdp);
	u8 nr_frags = xdp_buff_has_frags(xdp) ? sinfo->nr_frags : 0;
	struct sk_buff *skb;
	int metalen;

	skb = napi_build_skb(xdp->data_hard_start, xdp->frame_sz);
	if (!skb)
		return NULL;
	skb_reserve(skb, xdp->data - xdp->data_hard_start);
	__skb_put(skb, xdp->data_end - xdp->data);
	metalen = xdp->data - xdp->data_meta;
	if (metalen > 0)
		skb_metadata_set(skb, metalen);
	skb_mark_for_recycle(skb);
	if (nr_frags)
		dmn_skb_take_xdp_frags(skb, xdp, nr_frags, sinfo->xdp_frags_size);
	return skb;
}

/* An xdp_buff with what the RX metadata kfuncs report for its frame. */
struct dmn_xdp_buff {
	struct xdp_buff xdp;
	u32 hash;
	enum xdp_rss_hash_type hash_type;
};

/* What bpf_xdp_metadata_rx_hash() reports: the RSS hash steering computed. */
static int dmn_xmo_rx_hash(const struct xdp_md *ctx, u32 *hash,
			   enum xdp_rss_hash_type *rss_type)
{
	const struct dmn_xdp_buff *buf = (const void *)ctx;

	if (!buf->hash)
		return -ENODATA;
	*hash = buf->hash;
	*rss_type = buf->hash_type;
	return 0;
}

static const struct xdp_metadata_ops dmn_xdp_metadata_ops = {
	.xmo_rx_hash = dmn_xmo_rx_hash,
};

/*
 * Runs @prog over a frame: @len bytes at dmn_xdp_headroom() into the host
 * page @head (a whole pool page), then @nr whole pool pages @frags holding
 * @lens bytes each. The pages move in: on XDP_PASS and XDP_TX *skb_out gets
 * an skb built on them (NULL if none could be built: the pages went back);
 * on XDP_REDIRECT they went to the target (to be flushed with
 * dmn_xdp_flush() before the poll ends); on any other verdict they go back
 * to their pool. Returns the verdict (XDP_ABORTED for a redirect that
 * failed); an unknown action is traced as an exception and returned as is.
 * @hash (0: none) and
 * @hash_type are the frame's RSS hash and what it was taken over, for the RX
 * metadata kfuncs.
 */
u32 dmn_xdp_run(struct bpf_prog *prog, struct xdp_rxq_info *rxq, unsigned long head, u32 len,
		const unsigned long *frags, const u32 *lens, u32 nr, u32 hash,
		u32 hash_type, struct sk_buff **skb_out)
{
	struct skb_shared_info *sinfo;
	struct dmn_xdp_buff buf;
	struct xdp_buff *xdp = &buf.xdp;
	u32 act, i, size = 0;

	*skb_out = NULL;
	xdp_init_buff(xdp, PAGE_SIZE, rxq);
	xdp_prepare_buff(xdp, netmem_address(head), dmn_xdp_headroom(), len, true);
	buf.hash = hash;
	buf.hash_type = hash_type;
	if (nr) {
		sinfo = xdp_get_shared_info_from_buff(xdp);
		for (i = 0; i < nr; i++) {
			skb_frag_fill_netmem_desc(&sinfo->frags[i], frags[i], 0, lens[i]);
			size += lens[i];
		}
		sinfo->nr_frags = nr;
		sinfo->xdp_frags_size = size;
		xdp_buff_set_frags_flag(xdp);
	}
	act = bpf_prog_run_xdp(prog, xdp);
	switch (act) {
	case XDP_PASS:
	case XDP_TX:
		*skb_out = dmn_xdp_build_skb(xdp);
		if (*skb_out)
			return act;
		break;
	case XDP_REDIRECT:
		/* The target owns the buffer now; dmn_xdp_flush() sends it on. */
		if (!xdp_do_redirect(rxq->dev, xdp, prog))
			return act;
		trace_xdp_exception(rxq->dev, prog, act);
		/* A failed redirect reads as an exception. */
		act = XDP_ABORTED;
		break;
	case XDP_DROP:
		break;
	default:
		bpf_warn_invalid_xdp_action(rxq->dev, prog, act);
		fallthrough;
	case XDP_ABORTED:
		trace_xdp_exception(rxq->dev, prog, act);
		break;
	}
	xdp_return_buff(xdp);
	return act;
}

/*
 * An skb of a frame another device's program redirected to @dev, its data
 * at the Ethernet header, as a transmitted frame's; NULL if none could be
 * built (the frame stays the caller's).
 */
struct sk_buff *dmn_xdp_frame_to_skb(struct xdp_frame *frame, struct net_device *dev)
{
	struct sk_buff *skb = xdp_build_skb_from_frame(frame, dev);

	if (!skb)
		return NULL;
	/* (eth_type_trans() pulled the Ethernet header.) */
	skb_push(skb, ETH_HLEN);
	return skb;
}

unsigned int dmn_current_cpu(void)
{
	return raw_smp_processor_id();
}

/* Sends on the frames redirected during a NAPI poll (before it ends). */
void dmn_xdp_flush(void)
{
	xdp_do_flush();
}

/*
 * What a sender does in software for a receiver that runs XDP, which sees
 * wire frames: segments a TSO super-frame, or fills a checksum left to the
 * device. Returns the frames to send (a list through ->next), or NULL with
 * @skb freed if that failed or cannot be done: the CPU cannot read
 * device-memory frags (devmem TX) to segment or checksum them.
 */
struct sk_buff *dmn_skb_offloads_in_software(struct sk_buff *skb)
{
	struct sk_buff *segs;

	if (!skb_frags_readable(skb)) {
		kfree_skb(skb);
		return NULL;
	}

	if (skb_is_gso(skb)) {
		segs = skb_gso_segment(skb, 0);
		if (IS_ERR_OR_NULL(segs)) {
			kfree_skb(skb);
			return NULL;
		}
		consume_skb(skb);
		return segs;
	}
	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb)) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

void dmn_skb_set_queue_mapping(struct sk_buff *skb, u16 queue)
{
	skb_set_queue_mapping(skb, queue);
}

/* Unlinks the first frame of a list from dmn_skb_offloads_in_software(). */
struct sk_buff *dmn_skb_list_pop(struct sk_buff **list)
{
	struct sk_buff *skb = *list;

	if (skb) {
		*list = skb->next;
		skb_mark_not_on_list(skb);
	}
	return skb;
}

void dmn_netdev_set_xdp_features(struct net_device *dev)
{
	dev->xdp_features = NETDEV_XDP_ACT_BASIC | NETDEV_XDP_ACT_REDIRECT | NETDEV_XDP_ACT_RX_SG |
			    NETDEV_XDP_ACT_NDO_XMIT | NETDEV_XDP_ACT_NDO_XMIT_SG;
	dev->xdp_metadata_ops = &dmn_xdp_metadata_ops;
}

bool dmn_netdev_bpf_is_setup_prog(const struct netdev_bpf *bpf)
{
	return bpf->command == XDP_SETUP_PROG;
}

struct bpf_prog *dmn_netdev_bpf_prog(const struct netdev_bpf *bpf)
{
	return bpf->prog;
}

struct netlink_ext_ack *dmn_netdev_bpf_extack(const struct netdev_bpf *bpf)
{
	return bpf->extack;
}
