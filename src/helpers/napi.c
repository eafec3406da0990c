// SPDX-License-Identifier: GPL-2.0
/*
 * NAPI (src/abstractions/napi.rs); the calls that differ between kernels
 * (the _locked add and delete) are in compat.c.
 */
#include <linux/netdevice.h>

#include "devmemnic_helpers.h"

int dmn_napi_gro_receive(struct napi_struct *napi, struct sk_buff *skb)
{
	return napi_gro_receive(napi, skb);
}

void dmn_napi_del(struct napi_struct *napi)
{
	netif_napi_del(napi);
}

bool dmn_napi_schedule(struct napi_struct *napi)
{
	return napi_schedule(napi);
}

struct net_device *dmn_napi_dev(struct napi_struct *napi)
{
	return napi->dev;
}
