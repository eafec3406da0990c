// SPDX-License-Identifier: GPL-2.0
/*
 * Native XDP: a program's run over a frame in host page-pool pages, and the
 * skb built on them after its verdict (src/abstractions/xdp.rs decides).
 */
#include <linux/bpf_trace.h>
#include <linux/filter.h>
#include <linux/netdevice.h>
#include <net/page_pool/helpers.h>
#include <net/xdp.h>

#include "devmemnic_helpers.h"

unsigned int dmn_xdp_headroom(void)
{
	return XDP_PACKET_HEADROOM + NET_SKB_PAD;
}

/*
 * Runs @prog over @buf filled with @len bytes at dmn_xdp_headroom() into the
 * pool page @head, then @nr pool pages @frags of @lens bytes each.
 */
u32 dmn_xdp_run_prog(struct bpf_prog *prog, struct dmn_xdp_buff *buf, struct xdp_rxq_info *rxq,
		     unsigned long head, u32 len, const unsigned long *frags, const u32 *lens,
		     u32 nr)
{
	struct xdp_buff *xdp = &buf->xdp;
	struct skb_shared_info *sinfo;
	u32 i, size = 0;

	xdp_init_buff(xdp, PAGE_SIZE, rxq);
	xdp_prepare_buff(xdp, netmem_address(head), dmn_xdp_headroom(), len, true);
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
	return bpf_prog_run_xdp(prog, xdp);
}

/* An skb on @xdp's buffer and frags, or NULL (they stay @xdp's). */
struct sk_buff *dmn_xdp_build_skb(struct xdp_buff *xdp)
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

void dmn_trace_xdp_exception(struct net_device *dev, struct bpf_prog *prog, u32 act)
{
	trace_xdp_exception(dev, prog, act);
}

unsigned int dmn_current_cpu(void)
{
	return raw_smp_processor_id();
}
