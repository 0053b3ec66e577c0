/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ib_ipoib (events/ib_ipoib/ in tracefs): the state
 * changes of connected-mode channels, paths and multicast groups, each
 * emitted by the one function that writes that state (ipoib_cm.c,
 * ipoib_arp.c, ipoib_multicast.c), in the writer's context. Off, each
 * costs a static branch; on, it takes no lock of ours. GIDs are recorded
 * as text (as %pI6c prints them) so that event filters can match them:
 *
 *   echo 'peer_qpn == 0x12' > events/ib_ipoib/ipoib_cm_state/filter
 *   echo 'dgid ~ "*:3402"' > events/ib_ipoib/ipoib_path_state/filter
 *
 * "none" as the old state is an object's creation, as the new state its
 * removal (a path or a group; a channel ends in "dead"). ipoib_trace.c
 * creates the events.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ib_ipoib

#if !defined(IPOIB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define IPOIB_TRACE_H

#include <linux/tracepoint.h>
#include <linux/inet.h>

#include "ipoib.h"
#include "ipoib_cm.h"

#ifndef IPOIB_TRACE_ONCE
#define IPOIB_TRACE_ONCE

/* the state before an object existed, or after it went */
#define IPOIB_TRACE_NONE	0xff

/* the kind of a group's membership */
#define IPOIB_TRACE_FULL	0
#define IPOIB_TRACE_SENDONLY	1
#define IPOIB_TRACE_NONMEMBER	2

/* a channel's QP, 0 until its set-up work has made it */
static inline u32 ipoib_trace_cm_qpn(const struct ipoib_cm_chan *chan)
{
	const struct ib_qp *qp = READ_ONCE(chan->qp);

	return qp ? qp->qp_num : 0;
}

static inline u8 ipoib_trace_mcast_kind(const struct ipoib_mcast *mc)
{
	if (mc->sendonly)
		return IPOIB_TRACE_SENDONLY;
	return mc->nonmember ? IPOIB_TRACE_NONMEMBER : IPOIB_TRACE_FULL;
}
#endif /* IPOIB_TRACE_ONCE */

/* user space reads the events with the values of the states' names */
TRACE_DEFINE_ENUM(IPOIB_CM_CONNECTING);
TRACE_DEFINE_ENUM(IPOIB_CM_ACCEPTING);
TRACE_DEFINE_ENUM(IPOIB_CM_LIVE);
TRACE_DEFINE_ENUM(IPOIB_CM_DRAINING);
TRACE_DEFINE_ENUM(IPOIB_CM_DEAD);
TRACE_DEFINE_ENUM(IPOIB_PATH_RESOLVING);
TRACE_DEFINE_ENUM(IPOIB_PATH_READY);
TRACE_DEFINE_ENUM(IPOIB_PATH_FAILED);
TRACE_DEFINE_ENUM(IPOIB_MCAST_IDLE);
TRACE_DEFINE_ENUM(IPOIB_MCAST_JOINING);
TRACE_DEFINE_ENUM(IPOIB_MCAST_JOINED);
TRACE_DEFINE_ENUM(IPOIB_MCAST_REJOINING);
TRACE_DEFINE_ENUM(IPOIB_MCAST_FAILED);

#define ipoib_show_cm_state(val)					\
	__print_symbolic(val, { IPOIB_TRACE_NONE, "none" },		\
			 { IPOIB_CM_CONNECTING, "connecting" },		\
			 { IPOIB_CM_ACCEPTING, "accepting" },		\
			 { IPOIB_CM_LIVE, "live" },			\
			 { IPOIB_CM_DRAINING, "draining" },		\
			 { IPOIB_CM_DEAD, "dead" })

#define ipoib_show_path_state(val)					\
	__print_symbolic(val, { IPOIB_TRACE_NONE, "none" },		\
			 { IPOIB_PATH_RESOLVING, "resolving" },		\
			 { IPOIB_PATH_READY, "ready" },			\
			 { IPOIB_PATH_FAILED, "failed" })

#define ipoib_show_mcast_state(val)					\
	__print_symbolic(val, { IPOIB_TRACE_NONE, "none" },		\
			 { IPOIB_MCAST_IDLE, "idle" },			\
			 { IPOIB_MCAST_JOINING, "joining" },		\
			 { IPOIB_MCAST_JOINED, "joined" },		\
			 { IPOIB_MCAST_REJOINING, "rejoining" },	\
			 { IPOIB_MCAST_FAILED, "failed" })

#define ipoib_show_mcast_kind(val)					\
	__print_symbolic(val, { IPOIB_TRACE_FULL, "full" },		\
			 { IPOIB_TRACE_SENDONLY, "send-only" },		\
			 { IPOIB_TRACE_NONMEMBER, "non-member" })

/*
 * A channel: its peer (GID, UD QPN), our QP of the connection, which
 * side opened it.
 */
TRACE_EVENT(ipoib_cm_state,
	    TP_PROTO(const struct ipoib_cm_chan *chan, unsigned int old,
		     unsigned int new),
	    TP_ARGS(chan, old, new),
	    TP_STRUCT__entry(__array(char, dev, IFNAMSIZ)
			     __array(char, peer, INET6_ADDRSTRLEN)
			     __field(u32, peer_qpn)
			     __field(u32, qpn)
			     __field(u8, old)
			     __field(u8, new)
			     __field(bool, active)),
	    TP_fast_assign(strscpy(__entry->dev, chan->priv->dev->name,
				   IFNAMSIZ);
			   snprintf(__entry->peer, sizeof(__entry->peer),
				    "%pI6c", chan->peer->addr + 4);
			   __entry->peer_qpn =
				ipoib_cm_addr_qpn(chan->peer->addr);
			   __entry->qpn = ipoib_trace_cm_qpn(chan);
			   __entry->old = old;
			   __entry->new = new;
			   __entry->active = chan->active;),
	    TP_printk("dev=%s peer=%s peer_qpn=0x%06x qpn=0x%06x %s %s -> %s",
		      __entry->dev, __entry->peer, __entry->peer_qpn,
		      __entry->qpn, __entry->active ? "active" : "passive",
		      ipoib_show_cm_state(__entry->old),
		      ipoib_show_cm_state(__entry->new))
);

/* A path: its destination and, once resolved, DLID and SL (IB only). */
TRACE_EVENT(ipoib_path_state,
	    TP_PROTO(const struct ipoib_path *path, unsigned int old,
		     unsigned int new, int status),
	    TP_ARGS(path, old, new, status),
	    TP_STRUCT__entry(__array(char, dev, IFNAMSIZ)
			     __array(char, dgid, INET6_ADDRSTRLEN)
			     __field(int, status)
			     __field(u16, dlid)
			     __field(u8, sl)
			     __field(u8, old)
			     __field(u8, new)),
	    TP_fast_assign(strscpy(__entry->dev, path->priv->dev->name,
				   IFNAMSIZ);
			   snprintf(__entry->dgid, sizeof(__entry->dgid),
				    "%pI6c", path->dgid.raw);
			   __entry->status = status;
			   __entry->dlid = path->dlid;
			   __entry->sl = path->sl;
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("dev=%s dgid=%s %s -> %s dlid=0x%04x sl=%u status=%d",
		      __entry->dev, __entry->dgid,
		      ipoib_show_path_state(__entry->old),
		      ipoib_show_path_state(__entry->new),
		      __entry->dlid, __entry->sl, __entry->status)
);

/* A group: its MGID, the kind of membership, the MLID joined (IB only). */
TRACE_EVENT(ipoib_mcast_state,
	    TP_PROTO(const struct ipoib_mcast *mc, unsigned int old,
		     unsigned int new, int status),
	    TP_ARGS(mc, old, new, status),
	    TP_STRUCT__entry(__array(char, dev, IFNAMSIZ)
			     __array(char, mgid, INET6_ADDRSTRLEN)
			     __field(int, status)
			     __field(u16, mlid)
			     __field(u8, kind)
			     __field(u8, old)
			     __field(u8, new)),
	    TP_fast_assign(strscpy(__entry->dev, mc->priv->dev->name,
				   IFNAMSIZ);
			   snprintf(__entry->mgid, sizeof(__entry->mgid),
				    "%pI6c", mc->mgid);
			   __entry->status = status;
			   __entry->mlid = mc->joined.mlid;
			   __entry->kind = ipoib_trace_mcast_kind(mc);
			   __entry->old = old;
			   __entry->new = new;),
	    TP_printk("dev=%s mgid=%s %s %s -> %s mlid=0x%04x status=%d",
		      __entry->dev, __entry->mgid,
		      ipoib_show_mcast_kind(__entry->kind),
		      ipoib_show_mcast_state(__entry->old),
		      ipoib_show_mcast_state(__entry->new),
		      __entry->mlid, __entry->status)
);

#endif /* IPOIB_TRACE_H */

/* out of the kernel's tree: found through -I$(src) (Kbuild) */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ipoib_trace
#include <trace/define_trace.h>
