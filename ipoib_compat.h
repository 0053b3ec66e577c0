/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differences between the kernels we build for (Debian 12's 6.1 and
 * 6.12), in one place.
 */
#ifndef IPOIB_COMPAT_H
#define IPOIB_COMPAT_H

/*
 * ib_sa_path_rec_get()'s callback count became unsigned after 6.1; Kbuild
 * looks at the kernel's header and defines IPOIB_SA_NUM_PRS_UNSIGNED.
 */
#ifdef IPOIB_SA_NUM_PRS_UNSIGNED
#define IPOIB_NUM_PRS_T unsigned int
#else
#define IPOIB_NUM_PRS_T int
#endif

/* XDR (200 Gb/s lanes) came after 6.1; a 6.1 device cannot report it. */
#ifdef IPOIB_HAVE_SPEED_XDR
#define IPOIB_SPEED_XDR IB_SPEED_XDR
#else
#define IPOIB_SPEED_XDR 256
#endif

/*
 * The last argument of ib_device_ops.create_cq (tools/softib only): the
 * udata up to 6.1, the attribute bundle since 6.11. tools/softib's Kbuild
 * probes the header and defines IPOIB_CREATE_CQ_ATTRS.
 */
#ifdef IPOIB_CREATE_CQ_ATTRS
#define IPOIB_CREATE_CQ_LAST_ARG struct uverbs_attr_bundle *attrs
#else
#define IPOIB_CREATE_CQ_LAST_ARG struct ib_udata *udata
#endif

/* page_pool's header was split after 6.1 (a Kbuild probe) */
#ifdef IPOIB_PAGE_POOL_HELPERS
#include <net/page_pool/helpers.h>
#else
#include <net/page_pool.h>
#endif

/*
 * Whether page_pool_destroy() unmaps the pages still out in the stack
 * (6.12's pool tracks them; 6.1's unmaps each when it comes back, maybe
 * after the device is gone). A Kbuild probe.
 */
#ifdef IPOIB_PAGE_POOL_UNMAPS
#define IPOIB_POOL_MAY_MAP true
#else
#define IPOIB_POOL_MAY_MAP false
#endif

/*
 * A rate-limited netdev_dbg(dev, fmt, ...), which neither kernel has: as
 * net_dbg_ratelimited() does, the call site's dynamic debug switch first,
 * then net_ratelimit(), so that a site turned off costs a static branch
 * and takes nothing from the rate limit. Without dynamic debug in the
 * kernel (Debian's have it): nothing, the format still checked.
 */
#define ipoib_first_arg(first, ...)	first

#if defined(CONFIG_DYNAMIC_DEBUG) || \
	(defined(CONFIG_DYNAMIC_DEBUG_CORE) && defined(DYNAMIC_DEBUG_MODULE))
#define ipoib_netdev_dbg_ratelimited(dev, ...)				\
	do {								\
		DEFINE_DYNAMIC_DEBUG_METADATA(ipoib_ddebug,		\
					      ipoib_first_arg(__VA_ARGS__)); \
		if (DYNAMIC_DEBUG_BRANCH(ipoib_ddebug) &&		\
		    net_ratelimit())					\
			__dynamic_netdev_dbg(&ipoib_ddebug, dev,	\
					     __VA_ARGS__);		\
	} while (0)
#else
#define ipoib_netdev_dbg_ratelimited(dev, ...)				\
	do {								\
		if (0)							\
			netdev_printk(KERN_DEBUG, dev, __VA_ARGS__);	\
	} while (0)
#endif

#endif /* IPOIB_COMPAT_H */
