// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast groups: the broadcast group that forms the link (RFC 4391 s5),
 * the groups of the device's multicast list (s4, s10) and send-only
 * groups for traffic to groups we are not a member of. Every join, leave
 * and retry runs in mcast_work (or, when the interface stops, in ndo_stop)
 * under RTNL and mcast_mutex, driven by one transition function per
 * group; transmit only looks groups up (a hash table, RCU).
 */
#include <linux/jhash.h>
#include <linux/rtnetlink.h>
#include <linux/seq_file.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"
#include "ipoib_trace.h"

#define IPOIB_MCAST_MAX_BACKOFF	8	/* seconds; the in-tree waits 16 */

static bool ipoib_mcast_is_broadcast(struct ipoib_dev *priv,
				     const u8 *mgid)
{
	return !memcmp(mgid, priv->dev->broadcast + 4, IPOIB_GID_LEN);
}

/* under rcu_read_lock(), mcast_lock or mcast_mutex */
static u32 ipoib_mgid_hash(const u8 *mgid)
{
	return jhash(mgid, IPOIB_GID_LEN, 0);
}

static struct ipoib_mcast *ipoib_mcast_find(struct ipoib_dev *priv,
					    const u8 *mgid)
{
	struct ipoib_mcast *mc;

	hash_for_each_possible_rcu(priv->mcast_hash, mc, node,
				   ipoib_mgid_hash(mgid),
				   lockdep_is_held(&priv->mcast_lock) ||
				   lockdep_is_held(&priv->mcast_mutex))
		if (!memcmp(mc->mgid, mgid, IPOIB_GID_LEN))
			return mc;
	return NULL;
}

/*
 * The one writer of mc->state (WRITE_ONCE: transmit reads it without a
 * lock), which traces it; @old is IPOIB_TRACE_NONE for a new group,
 * @status a failed join's error. Use ipoib_mcast_set_state() (under
 * mcast_mutex, from the group's step) and ipoib_mcast_init_state().
 */
static void __ipoib_mcast_set_state(struct ipoib_mcast *mc, unsigned int old,
				    enum ipoib_mcast_state new, int status)
{
	WRITE_ONCE(mc->state, new);
	trace_ipoib_mcast_state(mc, old, new, status);
}

static void ipoib_mcast_set_state(struct ipoib_mcast *mc,
				  enum ipoib_mcast_state new, int status)
{
	lockdep_assert_held(&mc->priv->mcast_mutex);
	__ipoib_mcast_set_state(mc, mc->state, new, status);
}

/* A group's first state, as it is linked (mcast_lock held) */
static void ipoib_mcast_init_state(struct ipoib_mcast *mc)
{
	lockdep_assert_held(&mc->priv->mcast_lock);
	__ipoib_mcast_set_state(mc, IPOIB_TRACE_NONE, IPOIB_MCAST_IDLE, 0);
}

/*
 * Under mcast_lock: a new group into the list (at its head or tail) and
 * the table, IDLE (until then nothing looks at its state)
 */
static void ipoib_mcast_link(struct ipoib_dev *priv, struct ipoib_mcast *mc,
			     bool head)
{
	lockdep_assert_held(&priv->mcast_lock);
	ipoib_mcast_init_state(mc);
	if (head)
		list_add_rcu(&mc->list, &priv->mcasts);
	else
		list_add_tail_rcu(&mc->list, &priv->mcasts);
	hash_add_rcu(priv->mcast_hash, &mc->node, ipoib_mgid_hash(mc->mgid));
	if (mc->sendonly) {
		list_add_tail(&mc->so_node, &priv->mcast_so_list);
		priv->mcast_sendonly++;
	}
}

/* Under mcast_lock: no longer a send-only group (left or rekinded) */
static void ipoib_mcast_sendonly_end(struct ipoib_dev *priv,
				     struct ipoib_mcast *mc)
{
	lockdep_assert_held(&priv->mcast_lock);
	if (!mc->sendonly)
		return;
	list_del(&mc->so_node);
	priv->mcast_sendonly--;
	priv->mcast_evicted -= mc->evicted;
	mc->sendonly = false;
	WRITE_ONCE(mc->evicted, false);
}

static void ipoib_mcast_unlink(struct ipoib_dev *priv, struct ipoib_mcast *mc)
{
	lockdep_assert_held(&priv->mcast_lock);
	list_del_rcu(&mc->list);
	hash_del_rcu(&mc->node);
	ipoib_mcast_sendonly_end(priv, mc);
}

static const char *ipoib_mcast_kind(const struct ipoib_mcast *mc)
{
	return mc->sendonly ? "send-only" :
	       mc->nonmember ? "non-member" : "full member";
}

/* Router groups on one interface, at most (RFC 4391 s11) */
#define IPOIB_MAX_ROUTER	1024

/* Under mcast_lock: priv->mcast_router_count counts them. */
static void ipoib_mcast_set_router(struct ipoib_dev *priv,
				   struct ipoib_mcast *mc, bool on)
{
	lockdep_assert_held(&priv->mcast_lock);
	if (mc->router == on)
		return;
	mc->router = on;
	if (on)
		priv->mcast_router_count++;
	else
		priv->mcast_router_count--;
}

static struct ipoib_mcast *ipoib_mcast_new(struct ipoib_dev *priv,
					   const u8 *mgid, gfp_t gfp)
{
	struct ipoib_mcast *mc;

	mc = kzalloc(sizeof(*mc), gfp);
	if (!mc)
		return NULL;
	mc->priv = priv;
	memcpy(mc->mgid, mgid, IPOIB_GID_LEN);
	/* IDLE (zero) when linked: ipoib_mcast_link() */
	mc->created = jiffies;
	mc->last_used = jiffies;
	skb_queue_head_init(&mc->queue);
	return mc;
}

static void ipoib_mcast_free_rcu(struct rcu_head *head)
{
	struct ipoib_mcast *mc = container_of(head, struct ipoib_mcast, rcu);

	ipoib_ah_put(mc->ah);
	kfree(mc);
}

/*
 * Run the multicast work @delay jiffies from now, or sooner if a run is
 * already due sooner (ipoib_rtnl_work_queue); callers serialised, so
 * that a retry timer cannot slip past a join result.
 */
static void ipoib_mcast_schedule(struct ipoib_dev *priv, unsigned long delay)
{
	unsigned long flags;

	if (!test_bit(IPOIB_FLAG_OPER_UP, &priv->flags))
		return;
	spin_lock_irqsave(&priv->mcast_sched_lock, flags);
	ipoib_rtnl_work_queue(priv, &priv->mcast_work, delay);
	spin_unlock_irqrestore(&priv->mcast_sched_lock, flags);
}

/* Called by the fabric when a join completes or a membership is lost. */
void ipoib_mcast_joined(struct ipoib_mcast *mc, int status)
{
	struct ipoib_dev *priv = mc->priv;

	spin_lock_bh(&priv->mcast_lock);
	if (status == -ENETRESET) {
		/* the SA lost a membership: apart from a join's result */
		mc->join_lost = true;
	} else {
		mc->join_status = status;
		mc->join_done = true;
	}
	spin_unlock_bh(&priv->mcast_lock);
	ipoib_mcast_schedule(priv, 0);
}

/* Undo a membership: detach, leave, drop the address handle. */
static void ipoib_mcast_drop_membership(struct ipoib_dev *priv,
					struct ipoib_mcast *mc)
{
	struct ipoib_ah *ah;

	lockdep_assert_held(&priv->mcast_mutex);

	if (mc->attached) {
		ib_detach_mcast(priv->qp, (union ib_gid *)mc->mgid,
				mc->joined.mlid);
		mc->attached = false;
	}
	priv->fabric->mcast_leave(priv, mc);
	rdma_destroy_ah_attr(&mc->params.ah_attr);
	spin_lock_bh(&priv->mcast_lock);
	ah = mc->ah;
	mc->ah = NULL;
	memset(&mc->joined, 0, sizeof(mc->joined));
	mc->join_done = false;
	mc->join_lost = false;
	mc->rejoin = false;
	spin_unlock_bh(&priv->mcast_lock);
	/* transmit may still hold the old pointer under RCU */
	ipoib_ah_put_deferred(ah);
}

static void ipoib_mcast_fail(struct ipoib_dev *priv, struct ipoib_mcast *mc,
			     int status)
{
	atomic_long_inc(&priv->counters.mcast_join_failures);
	if (status == -ENETDOWN) {
		/*
		 * RoCE's underlay not operationally up yet: every second, no
		 * more often (it may stay down), no less (not every RoCE
		 * device reports a port event when it comes up)
		 */
		mc->backoff = 1;
		mc->retry_at = jiffies + HZ;
	} else if (status == -EAGAIN || mc->sm_new) {
		/*
		 * ib_sa has no SM address yet (it follows port events), or
		 * the join was asked of an SM that is gone: soon, no backoff
		 */
		mc->backoff = 0;
		mc->retry_at = jiffies + HZ / 10;
	} else {
		mc->backoff = mc->backoff ?
			min(mc->backoff * 2, IPOIB_MCAST_MAX_BACKOFF) : 1;
		mc->retry_at = jiffies + mc->backoff * HZ;
	}
	mc->sm_new = false;
	ipoib_mcast_set_state(mc, IPOIB_MCAST_FAILED, status);
	/*
	 * A NonMember join the SA refused (ib_sa's -EINVAL: the group is
	 * gone): the router lets it go. Timeouts and the like retry.
	 */
	if (mc->nonmember && status == -EINVAL) {
		spin_lock_bh(&priv->mcast_lock);
		ipoib_mcast_set_router(priv, mc, false);
		spin_unlock_bh(&priv->mcast_lock);
	}
	ipoib_mcast_dbg(priv, "join of %pI6c failed: %d, backoff %u s\n",
			mc->mgid, status, mc->backoff);
	DEV_STATS_ADD(priv->dev, tx_dropped, skb_queue_len(&mc->queue));
	skb_queue_purge(&mc->queue);
	/*
	 * RFC 4391 s12: multicast failures are worth a (rate-limited) word;
	 * -ENETDOWN, RoCE's underlay not up yet, the fabric has said
	 */
	if (status != -ENETDOWN)
		ipoib_warn_rl(priv, "%s join of %pI6 failed: %d, retry in %u s\n",
			      ipoib_mcast_kind(mc), mc->mgid,
			      status, mc->backoff);
}

/*
 * A join's result put to use: the Q_Key and MTU of the broadcast group,
 * the QP attached to the MLID (again, on another one after a rejoin),
 * a new address handle for transmit.
 */
static int ipoib_mcast_complete_join(struct ipoib_dev *priv,
				     struct ipoib_mcast *mc)
{
	struct ipoib_ah *ah, *old;
	int ret;

	lockdep_assert_held(&priv->mcast_mutex);

	if (mc == priv->broadcast) {
		/* RFC 4391 s9.1.2: the group's Q_Key for all traffic */
		ret = ipoib_ib_set_qkey(priv, mc->params.qkey);
		if (ret)
			return ret;
		/* a rejoin may change it under transmit */
		WRITE_ONCE(priv->mcast_mtu, mc->params.ib_mtu);
		/* paths are asked for in the group's traffic class */
		WRITE_ONCE(priv->bcast_tclass,
			   rdma_ah_read_grh(&mc->params.ah_attr)->traffic_class);
	}
	ah = ipoib_ah_create(priv, &mc->params.ah_attr);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	if (mc->attached && mc->joined.mlid != mc->params.mlid) {
		ib_detach_mcast(priv->qp, (union ib_gid *)mc->mgid,
				mc->joined.mlid);
		mc->attached = false;
	}
	if (!mc->sendonly && !mc->attached) {
		ret = ib_attach_mcast(priv->qp, (union ib_gid *)mc->mgid,
				      mc->params.mlid);
		if (ret) {
			ipoib_ah_put(ah);
			return ret;
		}
		mc->attached = true;
	}
	spin_lock_bh(&priv->mcast_lock);
	old = mc->ah;
	/* transmit reads it under RCU (ipoib_mcast_xmit) */
	smp_store_release(&mc->ah, ah);
	mc->joined.qkey = mc->params.qkey;
	mc->joined.mtu = mc->params.ib_mtu;
	mc->joined.mlid = mc->params.mlid;
	mc->joined.rate = rdma_ah_get_static_rate(&mc->params.ah_attr);
	spin_unlock_bh(&priv->mcast_lock);
	ipoib_ah_put_deferred(old);
	return 0;
}

static void ipoib_mcast_flush_queue(struct ipoib_mcast *mc)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&mc->queue)))
		dev_queue_xmit(skb);
}

static bool ipoib_mcast_sendonly_idle(const struct ipoib_mcast *mc)
{
	return time_after(jiffies,
			  READ_ONCE(mc->last_used) + IPOIB_SENDONLY_IDLE);
}

/* No fabric join of the group in flight */
static bool ipoib_mcast_settled(const struct ipoib_mcast *mc)
{
	return mc->state != IPOIB_MCAST_JOINING &&
	       mc->state != IPOIB_MCAST_REJOINING;
}

/*
 * The group is wanted as another kind of member: a send-only group that
 * the multicast list or a router now wants, a router's NonMember group
 * that a socket joins or leaves. Leave whatever membership there is (or
 * wait for its join to end first: a join in flight is the fabric's) and
 * start again as the new kind.
 */
static void ipoib_mcast_rekind(struct ipoib_dev *priv, struct ipoib_mcast *mc,
			       bool nonmember)
{
	if (mc->state != IPOIB_MCAST_IDLE && mc->state != IPOIB_MCAST_FAILED)
		ipoib_mcast_drop_membership(priv, mc);
	spin_lock_bh(&priv->mcast_lock);
	ipoib_mcast_sendonly_end(priv, mc);
	mc->nonmember = nonmember;
	spin_unlock_bh(&priv->mcast_lock);
	ipoib_mcast_set_state(mc, IPOIB_MCAST_IDLE, 0);
	mc->backoff = 0;
}

/* Other groups are joined with the broadcast group's parameters. */
static bool ipoib_mcast_link_formed(struct ipoib_dev *priv)
{
	return priv->broadcast && priv->broadcast->state == IPOIB_MCAST_JOINED;
}

/*
 * The SA lost a membership (SM restart, client reregister, LID change)
 * but the fabric still routes the group: join again behind the
 * attachment and address handle in use, so that carrier and traffic go
 * on (a port that went down dropped them all).
 * Other groups take the broadcast group's parameters: they wait for it.
 */
static void ipoib_mcast_rejoin(struct ipoib_dev *priv, struct ipoib_mcast *mc)
{
	int ret;

	lockdep_assert_held(&priv->mcast_mutex);

	if (mc != priv->broadcast && !ipoib_mcast_link_formed(priv))
		return;
	mc->rejoin = false;
	priv->fabric->mcast_leave(priv, mc);
	ipoib_mcast_set_state(mc, IPOIB_MCAST_REJOINING, 0);
	ipoib_mcast_dbg(priv, "joining %pI6 again\n", mc->mgid);
	atomic_long_inc(&priv->counters.mcast_joins);
	ret = priv->fabric->mcast_join(priv, mc);
	if (ret) {
		ipoib_mcast_drop_membership(priv, mc);
		ipoib_mcast_fail(priv, mc, ret);
	}
}

static void ipoib_mcast_start_join(struct ipoib_dev *priv,
				   struct ipoib_mcast *mc)
{
	int ret;

	ipoib_mcast_set_state(mc, IPOIB_MCAST_JOINING, 0);
	ipoib_mcast_dbg(priv, "joining %pI6 (%s)\n", mc->mgid,
			ipoib_mcast_kind(mc));
	atomic_long_inc(&priv->counters.mcast_joins);
	ret = priv->fabric->mcast_join(priv, mc);
	if (ret) {
		ipoib_mcast_drop_membership(priv, mc);
		ipoib_mcast_fail(priv, mc, ret);
	}
	/* a synchronous fabric has already called joined() */
}

/* A join (first or again) ended with status: JOINED, or FAILED to retry. */
static void ipoib_mcast_join_ended(struct ipoib_dev *priv,
				   struct ipoib_mcast *mc, int status)
{
	int ret = status ? status : ipoib_mcast_complete_join(priv, mc);

	if (ret) {
		ipoib_mcast_drop_membership(priv, mc);
		ipoib_mcast_fail(priv, mc, ret);
		return;
	}
	ipoib_mcast_set_state(mc, IPOIB_MCAST_JOINED, 0);
	mc->backoff = 0;
	mc->sm_new = false;
	ipoib_mcast_dbg(priv, "joined %pI6 (%s)\n", mc->mgid,
			ipoib_mcast_kind(mc));
	ipoib_mcast_flush_queue(mc);
	if (mc->rejoin)
		ipoib_mcast_rejoin(priv, mc);
}

/*
 * RFC 4391 s10: a SendOnlyNonMember sender waits for a listener's group.
 * Deleted (first: a report of both is a group made again, perhaps on
 * another MLID): the membership went with the group; a sender or router
 * waits for the next creation (or the backoff), a full member joins
 * again. Created: a join that failed (or may yet fail, in flight) is
 * tried at once.
 */
static void ipoib_mcast_sa_report(struct ipoib_dev *priv,
				  struct ipoib_mcast *mc, bool created,
				  bool deleted, bool done)
{
	if (deleted && (mc->state == IPOIB_MCAST_JOINED ||
			mc->state == IPOIB_MCAST_REJOINING)) {
		ipoib_mcast_drop_membership(priv, mc);
		/* no join failed: status 0 */
		ipoib_mcast_set_state(mc, IPOIB_MCAST_FAILED, 0);
		mc->backoff = mc->wanted ? 0 : IPOIB_MCAST_MAX_BACKOFF;
		mc->retry_at = jiffies + mc->backoff * HZ;
	}
	if (!created)
		return;
	if (mc->state == IPOIB_MCAST_FAILED) {
		mc->backoff = 0;
		mc->retry_at = jiffies;
	} else if (!ipoib_mcast_settled(mc) && !done) {
		mc->sm_new = true;
	}
}

/*
 * Whether the group is still wanted (the port up aside), and whether as a
 * NonMember. RFC 4391 s11: a router's join is a NonMember's, kept by no
 * one; but one that sends keeps the group as a sender would (as a full
 * member, without sendonly_nonmember), or leaving the send-only
 * membership would delete the group under its own traffic.
 */
static bool ipoib_mcast_wanted(const struct ipoib_mcast *mc, bool router,
			       bool *nonmember)
{
	bool sending = !ipoib_mcast_sendonly_idle(mc);

	*nonmember = router && !mc->wanted &&
		     (ipoib_sendonly_nonmember || !sending);
	return mc->wanted || router ||
	       (mc->sendonly && sending && !READ_ONCE(mc->evicted));
}

/* A wanted group's membership is of another kind than it must be. */
static bool ipoib_mcast_kind_changes(const struct ipoib_mcast *mc,
				     bool router, bool nonmember)
{
	return nonmember != mc->nonmember ||
	       (mc->sendonly && (mc->wanted || router));
}

/*
 * The one transition function of a group. Inputs: the state, whether the
 * group is still wanted and as which kind of member (full, a router's
 * NonMember, send-only), a completed fabric join (join_done/join_status),
 * the SA's reports and the retry time. Returns false when the group is
 * finished and must be freed.
 */
static bool ipoib_mcast_step(struct ipoib_dev *priv, struct ipoib_mcast *mc,
			     bool up)
{
	bool done, lost, created, deleted, router, wanted, nonmember;
	int status;

	spin_lock_bh(&priv->mcast_lock);
	done = mc->join_done;
	status = mc->join_status;
	lost = mc->join_lost;
	created = mc->sa_created;
	deleted = mc->sa_deleted;
	mc->join_done = false;
	mc->join_lost = false;
	mc->sa_created = false;
	mc->sa_deleted = false;
	/* a group gone, or routing off: nothing to route */
	if ((deleted && !created) || !priv->mcast_router)
		ipoib_mcast_set_router(priv, mc, false);
	router = up && mc->router;
	spin_unlock_bh(&priv->mcast_lock);
	wanted = up && ipoib_mcast_wanted(mc, router, &nonmember);
	/* a loss while a join is in flight was of the membership before */
	if (lost && (mc->state == IPOIB_MCAST_JOINED || done))
		mc->rejoin = true;
	if (created || deleted)
		ipoib_mcast_sa_report(priv, mc, created, deleted, done);

	if (wanted && ipoib_mcast_kind_changes(mc, router, nonmember) &&
	    (ipoib_mcast_settled(mc) || done)) {
		ipoib_mcast_rekind(priv, mc, nonmember);
		done = false;
	}

	switch (mc->state) {
	case IPOIB_MCAST_IDLE:
		if (!wanted)
			return false;
		/*
		 * RFC 4391 s9.1.2: every group takes the broadcast group's
		 * Q_Key (and P_Key, SL, MTU): wait for it rather than fail.
		 * Its join's end runs this again.
		 */
		if (mc != priv->broadcast && !ipoib_mcast_link_formed(priv))
			return true;
		ipoib_mcast_start_join(priv, mc);
		return true;
	case IPOIB_MCAST_JOINING:
	case IPOIB_MCAST_REJOINING:
		if (!wanted) {
			ipoib_mcast_drop_membership(priv, mc);
			return false;
		}
		if (done)
			ipoib_mcast_join_ended(priv, mc, status);
		return true;
	case IPOIB_MCAST_JOINED:
		if (!wanted) {
			ipoib_mcast_drop_membership(priv, mc);
			return false;
		}
		if (mc->rejoin)
			ipoib_mcast_rejoin(priv, mc);
		return true;
	case IPOIB_MCAST_FAILED:
		if (!wanted)
			return false;
		if (time_before(jiffies, mc->retry_at))
			return true;
		ipoib_mcast_set_state(mc, IPOIB_MCAST_IDLE, 0);
		return ipoib_mcast_step(priv, mc, up);
	default:
		return false;
	}
}

/*
 * An IPoIB MGID (RFC 4391 s4: signature 0x401B or 0x601B) of our scope
 * and P_Key: the kernel's ARP and ND build them from our broadcast
 * address, anything else in the list (a raw dev_mc_add) is not ours.
 */
static bool ipoib_mcast_ours(struct ipoib_dev *priv, const u8 *mgid)
{
	u16 pkey;
	u8 scope;

	return !ipoib_mgid_parse(mgid, &scope, NULL, &pkey) &&
	       scope == priv->scope && pkey == priv->pkey;
}

/*
 * Reported by the fabric (process context): the SA created or deleted
 * mgid, or listed it (created). Groups we send to care (RFC 4391 s10);
 * a router (IFF_ALLMULTI) takes every new group of its partition and
 * scope (s11). The next pass acts on it.
 */
void ipoib_mcast_group_event(struct ipoib_dev *priv, const u8 *mgid,
			     bool created)
{
	bool router = created && READ_ONCE(priv->mcast_router) &&
		      ipoib_mcast_ours(priv, mgid) &&
		      !ipoib_mcast_is_broadcast(priv, mgid);
	struct ipoib_mcast *mc, *fresh = NULL;

	if (router)
		fresh = ipoib_mcast_new(priv, mgid, GFP_KERNEL);
	/* listed or reported: not sent to (yet) */
	if (fresh)
		fresh->last_used = jiffies - IPOIB_SENDONLY_IDLE - 1;
	spin_lock_bh(&priv->mcast_lock);
	mc = ipoib_mcast_find(priv, mgid);
	if (!mc && fresh && test_bit(IPOIB_FLAG_OPER_UP, &priv->flags)) {
		if (priv->mcast_router_count < IPOIB_MAX_ROUTER) {
			ipoib_mcast_link(priv, fresh, false);
			mc = fresh;
			fresh = NULL;
		} else {
			ipoib_warn_rl(priv, "allmulticast: %u groups already, %pI6 not joined\n",
				      IPOIB_MAX_ROUTER, mgid);
		}
	}
	if (mc && created) {
		mc->sa_created = true;
		if (router)
			ipoib_mcast_set_router(priv, mc, true);
	} else if (mc) {
		mc->sa_deleted = true;
	}
	spin_unlock_bh(&priv->mcast_lock);
	kfree(fresh);
	if (!mc)
		return;
	atomic_long_inc(&priv->counters.mcast_sa_reports);
	ipoib_mcast_dbg(priv, "the SA reports %pI6c %s\n", mgid,
			created ? "created" : "deleted");
	ipoib_mcast_schedule(priv, 0);
}

/*
 * Mark the groups of the device's multicast list as wanted. Returns true
 * if umcast left one to userspace: that may be our own membership still
 * leaving, so the caller looks again later.
 */
static bool ipoib_mcast_sync_list(struct ipoib_dev *priv)
{
	struct net_device *dev = priv->dev;
	struct netdev_hw_addr *ha;
	struct ipoib_mcast *mc, *n;
	bool skipped = false;
	LIST_HEAD(fresh);

	/* (transmit may add a group meanwhile: under mcast_lock, RCU-safe) */
	list_for_each_entry_rcu(mc, &priv->mcasts, list,
				lockdep_is_held(&priv->mcast_mutex))
		if (mc != priv->broadcast)
			WRITE_ONCE(mc->wanted, false);

	netif_addr_lock_bh(dev);
	netdev_for_each_mc_addr(ha, dev) {
		const u8 *mgid = ha->addr + 4;

		/* only IPoIB MGIDs of our P_Key and scope belong here */
		if (!ipoib_mcast_ours(priv, mgid))
			continue;
		mc = ipoib_mcast_find(priv, mgid);
		if (!mc) {
			list_for_each_entry(n, &fresh, list)
				if (!memcmp(n->mgid, mgid, IPOIB_GID_LEN))
					mc = n;
		}
		/* umcast: a group userspace joined itself stays its own */
		if (!mc && READ_ONCE(priv->umcast) && priv->fabric->user_joined &&
		    priv->fabric->user_joined(priv, mgid)) {
			ipoib_mcast_dbg(priv, "%pI6c joined by userspace: left to it\n",
					mgid);
			skipped = true;
			continue;
		}
		if (!mc) {
			mc = ipoib_mcast_new(priv, mgid, GFP_ATOMIC);
			if (!mc)
				continue;
			list_add_tail(&mc->list, &fresh);
		}
		/* a send-only group becomes a full one in its step */
		WRITE_ONCE(mc->wanted, true);
	}
	netif_addr_unlock_bh(dev);

	spin_lock_bh(&priv->mcast_lock);
	list_for_each_entry_safe(mc, n, &fresh, list) {
		struct ipoib_mcast *old = ipoib_mcast_find(priv, mc->mgid);

		list_del(&mc->list);
		/* transmit made it a send-only group meanwhile */
		if (old) {
			WRITE_ONCE(old->wanted, true);
			kfree(mc);
			continue;
		}
		ipoib_mcast_link(priv, mc, false);
	}
	spin_unlock_bh(&priv->mcast_lock);
	return skipped;
}

/* how often carrier looks again while the link is not ready */
#define IPOIB_LINK_POLL		(HZ / 100 ?: 1)
#define IPOIB_LINK_POLL_SLOW	HZ	/* where the administrator must act */
/* GID 0 no address of the link: it may be on its way, or never come */
#define IPOIB_LINK_ABSENT_WAIT	(3 * HZ)

/*
 * Whether carrier may come on as far as the fabric goes: 0, or the
 * jiffies after which to look again; *@ready is what link_ready said,
 * @why what waits. Any context that may sleep; it only reads
 * link_wait_since (and warns once of a duplicate address).
 */
static unsigned long ipoib_link_wait(struct ipoib_dev *priv, char *why,
				     size_t len, int *ready)
{
	const struct ipoib_fabric_ops *f = priv->fabric;
	unsigned long since = READ_ONCE(priv->link_wait_since);

	why[0] = '\0';
	*ready = f->link_ready ? f->link_ready(priv, why, len) : 0;
	/* an address seen: a later absence has its grace and warning again */
	if (*ready != -ENOENT)
		clear_bit(IPOIB_FLAG_NO_GID_ADDR, &priv->flags);
	switch (*ready) {
	case 0:
		return 0;
	case -ENOENT:
		/*
		 * no address to wait for: carrier as the group says, after a
		 * grace for one on its way; at once after one never came
		 */
		if (test_bit(IPOIB_FLAG_NO_GID_ADDR, &priv->flags) ||
		    (since && time_after(jiffies, since + IPOIB_LINK_ABSENT_WAIT)))
			return 0;
		return IPOIB_LINK_POLL;
	case -EADDRINUSE:
		/* the administrator must act: say so, once a wait */
		if (!test_and_set_bit(IPOIB_FLAG_DUP_GID_ADDR, &priv->flags))
			netdev_warn(priv->dev, "carrier stays off: %s\n", why);
		return IPOIB_LINK_POLL_SLOW;
	default:
		return IPOIB_LINK_POLL;
	}
}

/* Look again, without RTNL, until the link is ready; then mcast_work. */
static void ipoib_mcast_link_wait_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      link_wait_work.work);
	unsigned long again;
	char why[128];
	int ready;

	/* carrier went off, or came on, since: nothing to wait for */
	if (!READ_ONCE(priv->link_wait_since))
		return;
	again = ipoib_link_wait(priv, why, sizeof(why), &ready);
	if (again)
		queue_delayed_work(system_wq, &priv->link_wait_work, again);
	else
		ipoib_mcast_schedule(priv, 0);
}

/*
 * Carrier means the interface can deliver: it follows the broadcast
 * group (RFC 4391 s5: joining it forms the link) and, where the fabric
 * has one, the unicast reachability of our own address (link_ready).
 * It comes on only once the group is joined, and stays on while the
 * group is joined again behind the old membership (REJOINING). The UD
 * MTU is the group's MTU minus the encapsulation header.
 */
static void ipoib_mcast_carrier(struct ipoib_dev *priv, bool up)
{
	struct ipoib_mcast *bc = priv->broadcast;
	struct net_device *dev = priv->dev;
	unsigned long again, since;
	char why[128];
	int ready;

	if (!up || !bc || (bc->state != IPOIB_MCAST_JOINED &&
			   (bc->state != IPOIB_MCAST_REJOINING ||
			    !netif_carrier_ok(dev)))) {
		WRITE_ONCE(priv->link_wait_since, 0);
		cancel_delayed_work(&priv->link_wait_work);
		/* the next wait warns again of a duplicate */
		clear_bit(IPOIB_FLAG_DUP_GID_ADDR, &priv->flags);
		if (netif_carrier_ok(dev))
			netif_carrier_off(dev);
		return;
	}
	ipoib_apply_mtu(priv);
	if (netif_carrier_ok(dev))
		return;
	since = priv->link_wait_since;
	again = ipoib_link_wait(priv, why, sizeof(why), &ready);
	if (again) {
		if (!since) {
			WRITE_ONCE(priv->link_wait_since, jiffies ?: 1);
			netdev_info(dev, "joined the broadcast group; carrier waits for %s\n",
				    why);
		}
		queue_delayed_work(system_wq, &priv->link_wait_work, again);
		return;
	}
	if (ready == -ENOENT &&
	    !test_and_set_bit(IPOIB_FLAG_NO_GID_ADDR, &priv->flags))
		netdev_warn(dev, "carrier on without %s: unicast to this interface cannot arrive\n",
			    why);
	WRITE_ONCE(priv->link_wait_since, 0);
	clear_bit(IPOIB_FLAG_DUP_GID_ADDR, &priv->flags);
	if (since)
		netdev_info(dev, "carrier on (MTU %u), %u ms after the broadcast group was joined\n",
			    dev->mtu, jiffies_to_msecs(jiffies - since));
	else
		netdev_info(dev, "joined the broadcast group, carrier on (MTU %u)\n",
			    dev->mtu);
	set_bit(IPOIB_FLAG_ANNOUNCE, &priv->flags);
	netif_carrier_on(dev);
	ipoib_mtu_hint(priv);
}

/*
 * RFC 4391 s10 and s11: follow the fabric's groups while sending as a
 * SendOnlyNonMember or routing (IFF_ALLMULTI), and have them listed
 * while routing (the fabric lists again after an SM change). Returns
 * true to be called again soon: the fabric refused.
 */
static bool ipoib_mcast_follow(struct ipoib_dev *priv, bool up)
{
	const struct ipoib_fabric_ops *f = priv->fabric;
	bool oper = test_bit(IPOIB_FLAG_OPER_UP, &priv->flags);
	bool allmulti = oper && (priv->dev->flags & IFF_ALLMULTI);
	bool routing = allmulti && f->mcast_list;
	/* not up for a moment (a port event's pass): the watch stays */
	bool watch = oper && f->mcast_watch &&
		     (ipoib_sendonly_nonmember || routing);
	int ret;

	ASSERT_RTNL();
	if (allmulti != priv->mcast_allmulti) {
		priv->mcast_allmulti = allmulti;
		if (routing)
			netdev_info(priv->dev, "allmulticast: receiving every IP multicast group of the partition as a NonMember (RFC 4391 s11)\n");
		else if (allmulti)
			netdev_info(priv->dev, "allmulticast: no effect here (this fabric cannot list its groups)\n");
	}
	if (watch != priv->mcast_watching) {
		if (!watch && priv->mcast_listing) {
			f->mcast_list(priv, false);
			priv->mcast_listing = false;
		}
		ret = f->mcast_watch(priv, watch);
		if (ret)
			return true;	/* said why; again soon */
		priv->mcast_watching = watch;
	}
	/* groups join as a router's only while the port is up */
	WRITE_ONCE(priv->mcast_router, routing && up);
	/* a pass with the port not up dropped the router's groups: relist */
	if (routing && !up)
		priv->mcast_listing = false;
	if (up && routing != priv->mcast_listing) {
		ret = f->mcast_list(priv, routing);
		if (ret) {
			ipoib_warn_rl(priv, "allmulticast: cannot list the groups: %d\n",
				      ret);
			return true;
		}
		priv->mcast_listing = routing;
	}
	return false;
}

/*
 * One pass over all groups. Under RTNL: the underlay's IPv6 group joins
 * need it on 6.1, and so do the MTU and the carrier. Nothing called from
 * here may take RTNL itself (ib_query_port() does on rxe). A pass from
 * the work ends after IPOIB_MCAST_PASS_MS and the next one follows at
 * once: a thousand joins or leaves must not hold RTNL, which every
 * socket's multicast join and leave takes, for long. A pass with the
 * port down (or the interface stopping, then in one go) leaves every
 * group. Returns true if cut short.
 */
#define IPOIB_MCAST_PASS_MS	20

static bool ipoib_mcast_run(struct ipoib_dev *priv, bool up, bool may_cut)
{
	u64 end = ktime_get_ns() + IPOIB_MCAST_PASS_MS * NSEC_PER_MSEC;
	unsigned long next = 0;
	struct ipoib_mcast *mc, *tmp;
	bool sm_new, more = false, stepped = false;

	ASSERT_RTNL();
	mutex_lock(&priv->mcast_mutex);
	if (up && !priv->broadcast) {
		mc = ipoib_mcast_new(priv, priv->dev->broadcast + 4, GFP_KERNEL);
		if (mc) {
			mc->wanted = true;
			priv->broadcast = mc;
			spin_lock_bh(&priv->mcast_lock);
			ipoib_mcast_link(priv, mc, true);
			spin_unlock_bh(&priv->mcast_lock);
		} else {
			next = jiffies + HZ;
		}
	}
	if (ipoib_mcast_follow(priv, up) && !next)
		next = jiffies + HZ;
	sm_new = test_and_clear_bit(IPOIB_FLAG_SM_NEW, &priv->flags);
	/* a new SM or SA answers now: a backoff meant for the old one ends */
	if (sm_new)
		list_for_each_entry_rcu(mc, &priv->mcasts, list,
					lockdep_is_held(&priv->mcast_mutex)) {
			if (mc->state == IPOIB_MCAST_FAILED) {
				mc->retry_at = jiffies;
				mc->backoff = 0;
			} else if (!ipoib_mcast_settled(mc)) {
				mc->sm_new = true;
			}
		}
	if (up && ipoib_mcast_sync_list(priv) && !next)
		next = jiffies + IPOIB_UMCAST_RECHECK;
	list_for_each_entry_safe(mc, tmp, &priv->mcasts, list) {
		/* one group at least: a slow start must not stall passes */
		if (may_cut && stepped && ktime_get_ns() > end) {
			more = true;
			break;
		}
		stepped = true;
		if (!ipoib_mcast_step(priv, mc, up)) {
			ipoib_mcast_dbg(priv, "left %pI6c (%s): %s\n", mc->mgid,
					ipoib_mcast_kind(mc), up ?
					"no longer wanted" :
					"leaving every group");
			/* its end: nothing written, the event says it went */
			trace_ipoib_mcast_state(mc, mc->state,
						IPOIB_TRACE_NONE, 0);
			spin_lock_bh(&priv->mcast_lock);
			ipoib_mcast_set_router(priv, mc, false);
			ipoib_mcast_unlink(priv, mc);
			spin_unlock_bh(&priv->mcast_lock);
			if (mc == priv->broadcast)
				priv->broadcast = NULL;
			DEV_STATS_ADD(priv->dev, tx_dropped, skb_queue_len(&mc->queue));
			skb_queue_purge(&mc->queue);
			call_rcu(&mc->rcu, ipoib_mcast_free_rcu);
			continue;
		}
		if (mc->state == IPOIB_MCAST_FAILED &&
		    (!next || time_before(mc->retry_at, next)))
			next = mc->retry_at;
		/* come back to leave it once idle */
		if (mc->sendonly) {
			unsigned long idle = READ_ONCE(mc->last_used) +
					     IPOIB_SENDONLY_IDLE + 1;

			if (!next || time_before(idle, next))
				next = idle;
		}
	}
	ipoib_mcast_carrier(priv, up);
	mutex_unlock(&priv->mcast_mutex);
	/* the rest of a pass cut short: after others had RTNL */
	if (more)
		ipoib_mcast_schedule(priv, 1);
	else if (next)
		ipoib_mcast_schedule(priv, max_t(long, next - jiffies, 1));
	return more;
}

/* ndo_stop cancels it without waiting: OPER_UP tells it what it finds. */
static void ipoib_mcast_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      mcast_work.work);

	if (!ipoib_rtnl_work_begin(priv))
		return;
	if (test_bit(IPOIB_FLAG_OPER_UP, &priv->flags)) {
		/*
		 * The port went or came back, or our GID 0 changed: drop
		 * every membership and path and join again at once (the
		 * in-tree driver's backoff could take 16 s here).
		 */
		if (test_and_clear_bit(IPOIB_FLAG_REJOIN, &priv->flags)) {
			/* the joins wait for the last pass of leaves */
			if (ipoib_mcast_run(priv, false, true)) {
				set_bit(IPOIB_FLAG_REJOIN, &priv->flags);
				goto out;
			}
			ipoib_path_flush(priv);
			/* and come in a pass, and an RTNL hold, of their own */
			ipoib_mcast_schedule(priv, 0);
			goto out;
		}
		ipoib_mcast_run(priv, ipoib_port_active(priv), true);
	}
out:
	ipoib_rtnl_work_end(priv);
}

/* Port error/active or a new GID 0 (process context). */
void ipoib_mcast_port_event(struct ipoib_dev *priv)
{
	set_bit(IPOIB_FLAG_REJOIN, &priv->flags);
	ipoib_mcast_schedule(priv, 0);
}

/* Client reregister, SM change, LID change (process context). */
void ipoib_mcast_sm_event(struct ipoib_dev *priv)
{
	set_bit(IPOIB_FLAG_SM_NEW, &priv->flags);
	ipoib_mcast_schedule(priv, 0);
}

void ipoib_fs_show_mcg(struct ipoib_dev *priv, struct seq_file *m)
{
	struct ipoib_mcast *mc;

	/* the in-tree driver's fields first, then what the join gave */
	rcu_read_lock();
	list_for_each_entry_rcu(mc, &priv->mcasts, list) {
		spin_lock_bh(&priv->mcast_lock);
		seq_printf(m, "GID: %pI6c created: %lu queuelen: %u complete: %s send_only: %s Q_Key: 0x%08x MLID: 0x%04x MTU: %u rate: %u join: %s\n",
			   mc->mgid, mc->created, skb_queue_len(&mc->queue),
			   mc->ah ? "yes" : "no", mc->sendonly ? "yes" : "no",
			   mc->joined.qkey, mc->joined.mlid, mc->joined.mtu,
			   mc->joined.rate, ipoib_mcast_kind(mc));
		spin_unlock_bh(&priv->mcast_lock);
	}
	rcu_read_unlock();
}

/*
 * Under mcast_lock, before a new send-only group: room for it. At
 * max_sendonly groups not yet evicted, an old one is evicted, and the next
 * pass leaves it: among the IPOIB_SENDONLY_SCAN oldest send-only groups
 * (the scan runs in transmit: bounded), one not being joined and with
 * nothing queued, the first without a membership (failed), else the least
 * recently used. No room (false) while IPOIB_SENDONLY_SLACK leaves are
 * pending or no group qualifies.
 */
#define IPOIB_SENDONLY_SLACK	64
#define IPOIB_SENDONLY_SCAN	256

static bool ipoib_mcast_evict_one(struct ipoib_dev *priv, unsigned int max)
{
	struct ipoib_mcast *mc, *lru = NULL;
	unsigned int scanned = 0;

	list_for_each_entry(mc, &priv->mcast_so_list, so_node) {
		enum ipoib_mcast_state state = READ_ONCE(mc->state);

		if (++scanned > IPOIB_SENDONLY_SCAN)
			break;
		/* not one being joined or with packets waiting for it */
		if (mc->evicted || READ_ONCE(mc->wanted) || mc->router ||
		    state == IPOIB_MCAST_JOINING ||
		    state == IPOIB_MCAST_REJOINING ||
		    !skb_queue_empty(&mc->queue))
			continue;
		/* one with no membership costs nothing to leave */
		if (state != IPOIB_MCAST_JOINED) {
			lru = mc;
			break;
		}
		if (!lru || time_before(READ_ONCE(mc->last_used),
					READ_ONCE(lru->last_used)))
			lru = mc;
	}
	if (!lru)
		return false;
	WRITE_ONCE(lru->evicted, true);
	priv->mcast_evicted++;
	atomic_long_inc(&priv->counters.mcast_sendonly_evicted);
	ipoib_mcast_dbg(priv, "send-only group limit %u: leaving %pI6c\n",
			max, lru->mgid);
	return true;
}

/* Cheap, before allocating: may a new send-only group get room? */
static bool ipoib_mcast_sendonly_may(struct ipoib_dev *priv)
{
	unsigned int max = READ_ONCE(ipoib_max_sendonly);

	return priv->mcast_sendonly - priv->mcast_evicted < max ||
	       (max && priv->mcast_evicted < IPOIB_SENDONLY_SLACK);
}

static bool ipoib_mcast_sendonly_room(struct ipoib_dev *priv)
{
	unsigned int max = READ_ONCE(ipoib_max_sendonly);

	lockdep_assert_held(&priv->mcast_lock);
	if (priv->mcast_sendonly - priv->mcast_evicted < max)
		return true;
	if (!max || priv->mcast_evicted >= IPOIB_SENDONLY_SLACK ||
	    !ipoib_mcast_evict_one(priv, max))
		return false;
	/* still at the bound (lowered at run time): one more, to come down */
	if (priv->mcast_sendonly - priv->mcast_evicted >= max &&
	    priv->mcast_evicted < IPOIB_SENDONLY_SLACK)
		ipoib_mcast_evict_one(priv, max);
	return true;
}

netdev_tx_t ipoib_mcast_xmit(struct ipoib_dev *priv, struct sk_buff *skb,
			     const u8 *mgid)
{
	struct ipoib_mcast *mc;
	struct ipoib_ah *ah;
	netdev_tx_t ret;

	rcu_read_lock();
	mc = ipoib_mcast_find(priv, mgid);
	ah = mc ? READ_ONCE(mc->ah) : NULL;
	if (likely(ah)) {
		WRITE_ONCE(mc->last_used, jiffies);
		ret = ipoib_ud_send(priv, skb, ah, IPOIB_MCAST_QPN,
				    READ_ONCE(priv->qkey));
		rcu_read_unlock();
		return ret;
	}
	rcu_read_unlock();

	/* not a member: a send-only join (a plain send on RoCE) first */
	spin_lock_bh(&priv->mcast_lock);
	mc = ipoib_mcast_find(priv, mgid);
	/* joined since the lockless look: its queue may be flushed already */
	ah = mc ? mc->ah : NULL;
	if (ah) {
		ipoib_ah_get(ah);
		spin_unlock_bh(&priv->mcast_lock);
		WRITE_ONCE(mc->last_used, jiffies);
		ret = ipoib_ud_send(priv, skb, ah, IPOIB_MCAST_QPN,
				    READ_ONCE(priv->qkey));
		ipoib_ah_put(ah);
		return ret;
	}
	if (!mc && test_bit(IPOIB_FLAG_OPER_UP, &priv->flags) &&
	    !ipoib_mcast_is_broadcast(priv, mgid)) {
		/* routing: joined to receive too, no kind to change */
		bool router = READ_ONCE(priv->mcast_router) &&
			      ipoib_mcast_ours(priv, mgid) &&
			      priv->mcast_router_count < IPOIB_MAX_ROUTER;

		bool room = router || ipoib_mcast_sendonly_may(priv);

		mc = room ? ipoib_mcast_new(priv, mgid, GFP_ATOMIC) : NULL;
		if (mc && !router && !ipoib_mcast_sendonly_room(priv)) {
			kfree(mc);
			mc = NULL;
			room = false;
		}
		if (!room) {
			atomic_long_inc(&priv->counters.tx_mcast_limit);
			ipoib_warn_rl(priv, "send-only group limit %u: dropped for %pI6\n",
				      READ_ONCE(ipoib_max_sendonly), mgid);
			goto drop;
		}
		if (mc) {
			mc->sendonly = !router;
			ipoib_mcast_link(priv, mc, false);
			if (router)
				ipoib_mcast_set_router(priv, mc, true);
		}
	}
	if (mc && READ_ONCE(mc->state) != IPOIB_MCAST_FAILED &&
	    skb_queue_len(&mc->queue) < IPOIB_MCAST_QUEUE_LEN) {
		skb_queue_tail(&mc->queue, skb);
		skb = NULL;
	}
drop:
	spin_unlock_bh(&priv->mcast_lock);
	if (skb) {
		DEV_STATS_INC(priv->dev, tx_dropped);
		dev_kfree_skb_any(skb);
	} else {
		ipoib_mcast_schedule(priv, 0);
	}
	return NETDEV_TX_OK;
}

void ipoib_mcast_init(struct ipoib_dev *priv)
{
	mutex_init(&priv->mcast_mutex);
	spin_lock_init(&priv->mcast_lock);
	spin_lock_init(&priv->mcast_sched_lock);
	INIT_LIST_HEAD(&priv->mcasts);
	INIT_LIST_HEAD(&priv->mcast_so_list);
	hash_init(priv->mcast_hash);
	INIT_DELAYED_WORK(&priv->mcast_work, ipoib_mcast_work);
	INIT_DELAYED_WORK(&priv->link_wait_work, ipoib_mcast_link_wait_work);
	priv->mcast_mtu = IPOIB_DEFAULT_IB_MTU;
}

/* Interface up: join the broadcast group, then the multicast list. */
void ipoib_mcast_start(struct ipoib_dev *priv)
{
	clear_bit(IPOIB_FLAG_REJOIN, &priv->flags);
	clear_bit(IPOIB_FLAG_SM_NEW, &priv->flags);
	set_bit(IPOIB_FLAG_OPER_UP, &priv->flags);
	ipoib_mcast_schedule(priv, 0);
}

/* Interface down (under RTNL): leave every group, here and now. */
void ipoib_mcast_stop(struct ipoib_dev *priv)
{
	clear_bit(IPOIB_FLAG_OPER_UP, &priv->flags);
	/*
	 * It takes no RTNL; only mcast_work, not running while we hold
	 * RTNL, queues it; once it is gone nothing queues mcast_work but
	 * what finds OPER_UP clear
	 */
	cancel_delayed_work_sync(&priv->link_wait_work);
	ipoib_rtnl_work_cancel(priv, &priv->mcast_work);
	ipoib_mcast_run(priv, false, false);
}

/*
 * sysfs or rtnl umcast (under RTNL). Only new groups look at it, as in the
 * in-tree driver; on a fabric without a record of userspace's joins
 * (RoCE) it changes nothing.
 */
void ipoib_set_umcast(struct ipoib_dev *priv, bool on)
{
	if (READ_ONCE(priv->umcast) == on)
		return;
	WRITE_ONCE(priv->umcast, on);
	netdev_info(priv->dev, "umcast %s%s\n", on ? "on" : "off",
		    priv->fabric->user_joined ? "" :
		    " (no effect here: the fabric keeps no record of userspace's joins)");
	ipoib_mcast_schedule(priv, 0);
}

/* The device's multicast list changed (atomic context). */
void ipoib_mcast_restart(struct ipoib_dev *priv)
{
	ipoib_mcast_schedule(priv, 0);
}
