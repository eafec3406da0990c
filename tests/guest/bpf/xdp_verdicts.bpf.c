// SPDX-License-Identifier: GPL-2.0
/*
 * XDP programs for devmemnic's guest tests (test-xdp.sh): a verdict for
 * IPv4 UDP by destination port, everything else passes.
 *   port 9 (discard): XDP_DROP
 *   port 7 (echo):    XDP_TX, addresses and ports swapped, so the sender's
 *                     connected socket receives its own datagram back
 *   port 11 (echo):   XDP_REDIRECT to the device it came in on, swapped
 *                     as for port 7 (out through ndo_xdp_xmit)
 *   port 13:          XDP_ABORTED
 * The same program in "xdp" (single buffer) and "xdp.frags" (multi-buffer).
 * No maps, no libbpf headers: it builds against the kernel's UAPI headers
 * alone.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>

#define SEC(name) __attribute__((section(name), used))

enum { DISCARD_PORT = 9, ECHO_PORT = 7, REDIRECT_PORT = 11, ABORT_PORT = 13 };

static long (*bpf_redirect)(__u32 ifindex, __u64 flags) = (void *)BPF_FUNC_redirect;

static __always_inline void swap_bytes(unsigned char *a, unsigned char *b, int n)
{
	for (int i = 0; i < n; i++) {
		unsigned char t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

static __always_inline int verdict(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u16 port;

	if ((void *)(eth + 1) > end || eth->h_proto != __builtin_bswap16(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > end)
		return XDP_PASS;
	port = __builtin_bswap16(udp->dest);
	if (port == DISCARD_PORT)
		return XDP_DROP;
	if (port == ABORT_PORT)
		return XDP_ABORTED;
	if (port != ECHO_PORT && port != REDIRECT_PORT)
		return XDP_PASS;
	/* Swapping addresses and ports leaves both checksums valid. */
	swap_bytes(eth->h_dest, eth->h_source, ETH_ALEN);
	swap_bytes((unsigned char *)&ip->saddr, (unsigned char *)&ip->daddr, 4);
	swap_bytes((unsigned char *)&udp->source, (unsigned char *)&udp->dest, 2);
	if (port == REDIRECT_PORT)
		return bpf_redirect(ctx->ingress_ifindex, 0);
	return XDP_TX;
}

SEC("xdp")
int xdp_verdicts(struct xdp_md *ctx)
{
	return verdict(ctx);
}

SEC("xdp.frags")
int xdp_verdicts_frags(struct xdp_md *ctx)
{
	return verdict(ctx);
}

char _license[] SEC("license") = "GPL";
