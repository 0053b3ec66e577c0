// SPDX-License-Identifier: GPL-2.0
/*
 * Address resolution below the neighbour table. The kernel's ARP and ND
 * map an IP address to a 20-octet link-layer address (RFC 4391 s9.2,
 * s9.3); the destination QPN travels with every packet, so what remains
 * is the path to the destination GID (RFC 4391 s9.1.2): an address handle
 * from the fabric (SA PathRecord on IB, IP neighbour resolution on RoCE).
 * A peer that comes back with a new QPN (s9.4) needs no flush here: its
 * new address simply carries the new QPN.
 */
#include <linux/bsearch.h>
#include <linux/jhash.h>
#include <linux/sort.h>
#include <linux/seq_file.h>
#include <net/arp.h>
#include <net/ndisc.h>
#include <net/netevent.h>

#include "ipoib.h"
#include "ipoib_trace.h"

static u32 ipoib_gid_hash(const union ib_gid *gid)
{
	return jhash(gid->raw, sizeof(gid->raw), 0);
}

/* under rcu_read_lock() or path_lock */
static struct ipoib_path *ipoib_path_find(struct ipoib_dev *priv,
					  const u8 *gid)
{
	struct ipoib_path *path;

	hash_for_each_possible_rcu(priv->paths, path, node,
				   ipoib_gid_hash((const union ib_gid *)gid))
		if (!memcmp(path->dgid.raw, gid, sizeof(path->dgid.raw)))
			return path;
	return NULL;
}

/*
 * The one writer of path->state (path_lock held), which traces it; @old
 * is IPOIB_TRACE_NONE for a new path, @status the resolution's result.
 * Transmit reads the state without the lock (acquire), then path->ah: a
 * path becomes READY with release semantics. Use ipoib_path_set_state()
 * and ipoib_path_init_state().
 */
static void __ipoib_path_set_state(struct ipoib_path *path, unsigned int old,
				   enum ipoib_path_state new, int status)
{
	lockdep_assert_held(&path->priv->path_lock);
	if (new == IPOIB_PATH_READY) {
		/* path->ah first: pairs with ipoib_path_xmit()'s acquire */
		smp_store_release(&path->state, new);
	} else {
		path->state = new;
	}
	trace_ipoib_path_state(path, old, new, status);
}

static void ipoib_path_set_state(struct ipoib_path *path,
				 enum ipoib_path_state new, int status)
{
	__ipoib_path_set_state(path, path->state, new, status);
}

static void ipoib_path_init_state(struct ipoib_path *path)
{
	__ipoib_path_set_state(path, IPOIB_TRACE_NONE, IPOIB_PATH_RESOLVING, 0);
}

static void ipoib_path_free_rcu(struct rcu_head *head)
{
	struct ipoib_path *path = container_of(head, struct ipoib_path, rcu);

	if (path->priv->fabric->path_free)
		path->priv->fabric->path_free(path);
	ipoib_ah_put(path->ah);
	kfree(path);
}

/* Process context; @path is already out of the hash table. */
static void ipoib_path_destroy(struct ipoib_dev *priv, struct ipoib_path *path)
{
	cancel_work_sync(&path->resolve_work);
	priv->fabric->path_cancel(priv, path);
	cancel_work_sync(&path->resolved_work);
	/* a cancelled resolved_work leaves the attribute's GID reference */
	rdma_destroy_ah_attr(&path->ah_attr);
	DEV_STATS_ADD(priv->dev, tx_dropped, skb_queue_len(&path->queue));
	skb_queue_purge(&path->queue);
	call_rcu(&path->rcu, ipoib_path_free_rcu);
}

static void ipoib_path_resolve_work(struct work_struct *work)
{
	struct ipoib_path *path = container_of(work, struct ipoib_path,
					       resolve_work);
	struct ipoib_dev *priv = path->priv;
	int ret;

	atomic_long_inc(&priv->counters.path_resolutions);
	ipoib_test_path_delay();
	ipoib_dbg(priv, 1, "resolving the path to %pI6c\n", path->dgid.raw);
	ret = priv->fabric->path_resolve(priv, path);
	if (ret)
		ipoib_path_resolved(path, ret);
}

/* Called by the fabric, in any context, once per resolution. */
void ipoib_path_resolved(struct ipoib_path *path, int status)
{
	path->status = status;
	queue_work(path->priv->wq, &path->resolved_work);
}

static void ipoib_path_resolved_work(struct work_struct *work)
{
	struct ipoib_path *path = container_of(work, struct ipoib_path,
					       resolved_work);
	struct ipoib_dev *priv = path->priv;
	struct ipoib_ah *ah = NULL;
	struct sk_buff_head queue;
	struct sk_buff *skb;
	int status = path->status;

	if (!status) {
		ah = ipoib_ah_create(priv, &path->ah_attr);
		if (IS_ERR(ah)) {
			status = PTR_ERR(ah);
			ah = NULL;
		}
	}
	rdma_destroy_ah_attr(&path->ah_attr);

	__skb_queue_head_init(&queue);
	spin_lock_bh(&priv->path_lock);
	if (ah) {
		path->ah = ah;
		/* readers check the state, then use ah without the lock */
		ipoib_path_set_state(path, IPOIB_PATH_READY, 0);
	} else {
		ipoib_path_set_state(path, IPOIB_PATH_FAILED, status);
		path->retry_at = jiffies + (status == -EAGAIN ?
					    IPOIB_PATH_RETRY_SOON :
					    IPOIB_PATH_RETRY);
	}
	skb_queue_splice_init(&path->queue, &queue);
	spin_unlock_bh(&priv->path_lock);

	if (!ah) {
		/* RFC 4391 s12: say why traffic to this peer is lost */
		atomic_long_inc(&priv->counters.path_failures);
		ipoib_warn_rl(priv, "no path to %pI6: %d\n", path->dgid.raw,
			      status);
		DEV_STATS_ADD(priv->dev, tx_dropped, skb_queue_len(&queue));
		__skb_queue_purge(&queue);
		return;
	}
	ipoib_dbg(priv, 1, "path to %pI6 ready (DLID 0x%04x SL %u)\n",
		  path->dgid.raw, path->dlid, path->sl);
	while ((skb = __skb_dequeue(&queue)))
		dev_queue_xmit(skb);
}

static struct ipoib_path *ipoib_path_new(struct ipoib_dev *priv,
					 const u8 *gid)
{
	struct ipoib_path *path;

	path = kzalloc(sizeof(*path), GFP_ATOMIC);
	if (!path)
		return NULL;
	path->priv = priv;
	memcpy(path->dgid.raw, gid, sizeof(path->dgid.raw));
	ipoib_path_init_state(path);
	path->last_used = jiffies;
	skb_queue_head_init(&path->queue);
	INIT_WORK(&path->resolve_work, ipoib_path_resolve_work);
	INIT_WORK(&path->resolved_work, ipoib_path_resolved_work);
	INIT_LIST_HEAD(&path->gc_node);
	return path;
}

/*
 * A ready path (under rcu_read_lock or in ndo_start_xmit): connected mode
 * where the peer and the packet allow it, else UD.
 */
static netdev_tx_t ipoib_path_send(struct ipoib_dev *priv,
				   struct sk_buff *skb, struct ipoib_path *path,
				   const struct ipoib_lladdr *dst)
{
	WRITE_ONCE(path->last_used, jiffies);
	if (priv->mode == IPOIB_MODE_CONNECTED) {
		int taken = ipoib_cm_xmit(priv, skb, path, dst);

		if (taken)
			return taken < 0 ? NETDEV_TX_BUSY : NETDEV_TX_OK;
	}
	return ipoib_ud_send(priv, skb, path->ah, dst->qpn,
			     READ_ONCE(priv->qkey));
}

static void ipoib_path_drop(struct ipoib_dev *priv, struct sk_buff *skb)
{
	atomic_long_inc(&priv->counters.tx_no_path);
	DEV_STATS_INC(priv->dev, tx_dropped);
	dev_kfree_skb_any(skb);
}

/*
 * Slow path (under rcu_read_lock): no ready path. Queue a few packets
 * while resolution runs; when full, the oldest goes, as in the kernel's
 * own neighbour queue: after an outage, that queue hands us its backlog
 * in one burst, and keeping the first of it would drop every packet sent
 * since, until the path is ready.
 */
static netdev_tx_t ipoib_path_queue(struct ipoib_dev *priv,
				    struct sk_buff *skb,
				    const struct ipoib_lladdr *dst)
{
	struct sk_buff *old = NULL;
	struct ipoib_path *path;
	bool start = false;

	spin_lock_bh(&priv->path_lock);
	path = ipoib_path_find(priv, dst->gid);
	if (!path) {
		if (priv->npaths >= IPOIB_MAX_PATHS) {
			mod_delayed_work(priv->wq, &priv->path_gc_work, 0);
			goto drop;
		}
		path = ipoib_path_new(priv, dst->gid);
		if (!path)
			goto drop;
		hash_add_rcu(priv->paths, &path->node,
			     ipoib_gid_hash(&path->dgid));
		priv->npaths++;
		start = true;
	} else if (path->state == IPOIB_PATH_READY) {
		/* became ready since the lockless look */
		spin_unlock_bh(&priv->path_lock);
		return ipoib_path_send(priv, skb, path, dst);
	} else if (path->state == IPOIB_PATH_FAILED) {
		if (time_before(jiffies, path->retry_at))
			goto drop;
		ipoib_path_set_state(path, IPOIB_PATH_RESOLVING, 0);
		start = true;
	}
	if (skb_queue_len(&path->queue) >= IPOIB_PATH_QUEUE_LEN)
		old = skb_dequeue(&path->queue);
	path->last_used = jiffies;
	skb_queue_tail(&path->queue, skb);
	if (start)
		queue_work(priv->wq, &path->resolve_work);
	spin_unlock_bh(&priv->path_lock);
	if (old)
		ipoib_path_drop(priv, old);
	return NETDEV_TX_OK;

drop:
	spin_unlock_bh(&priv->path_lock);
	ipoib_path_drop(priv, skb);
	return NETDEV_TX_OK;
}

netdev_tx_t ipoib_path_xmit(struct ipoib_dev *priv, struct sk_buff *skb,
			    const struct ipoib_lladdr *dst)
{
	enum ipoib_path_state state;
	struct ipoib_path *path;
	netdev_tx_t ret;

	rcu_read_lock();
	path = ipoib_path_find(priv, dst->gid);
	/* acquire pairs with the release that published path->ah */
	state = path ? smp_load_acquire(&path->state) : IPOIB_PATH_FAILED;
	if (likely(state == IPOIB_PATH_READY))
		ret = ipoib_path_send(priv, skb, path, dst);
	else
		ret = ipoib_path_queue(priv, skb, dst);
	rcu_read_unlock();
	return ret;
}

/* Take paths out of the table: all of them, or those idle too long. */
static void ipoib_path_evict(struct ipoib_dev *priv, bool all)
{
	struct ipoib_path *path, *tmp;
	struct hlist_node *n;
	LIST_HEAD(dead);
	unsigned int bkt;

	spin_lock_bh(&priv->path_lock);
	hash_for_each_safe(priv->paths, bkt, n, path, node) {
		if (!all && (path->state == IPOIB_PATH_RESOLVING ||
			     time_before(jiffies, READ_ONCE(path->last_used) +
					 IPOIB_PATH_IDLE)))
			continue;
		hash_del_rcu(&path->node);
		priv->npaths--;
		/* its end: nothing written, the event says it went */
		trace_ipoib_path_state(path, path->state, IPOIB_TRACE_NONE, 0);
		list_add_tail(&path->gc_node, &dead);
	}
	spin_unlock_bh(&priv->path_lock);

	list_for_each_entry_safe(path, tmp, &dead, gc_node)
		ipoib_path_destroy(priv, path);
}

static void ipoib_path_gc_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      path_gc_work.work);

	ipoib_path_evict(priv, false);
	queue_delayed_work(priv->wq, &priv->path_gc_work, IPOIB_PATH_IDLE / 2);
}

/* Forget every path, e.g. when the port came back (process context). */
void ipoib_path_flush(struct ipoib_dev *priv)
{
	ipoib_path_evict(priv, true);
}

static void ipoib_path_flush_work(struct work_struct *work)
{
	ipoib_path_flush(container_of(work, struct ipoib_dev,
				      path_flush_work));
}

/*
 * The same from an event handler: a flush sleeps (it cancels queries),
 * which must not hold up the RDMA core's event work.
 */
void ipoib_path_flush_soon(struct ipoib_dev *priv)
{
	queue_work(priv->wq, &priv->path_flush_work);
}

/* a burst of neighbour events makes one sweep */
#define IPOIB_NEIGH_SWEEP_DELAY	(HZ / 10)

struct ipoib_neigh_sweep {
	const struct net_device *dev, *master;	/* compared, not used */
	u8 *addrs;		/* IPOIB_ADDR_LEN each, sorted, flags octet 0 */
	unsigned long *named;			/* bit per addrs[] */
	unsigned int n;
};

/* neigh_for_each's callback, under the table's lock */
static void ipoib_neigh_mark(struct neighbour *n, void *cookie)
{
	struct ipoib_neigh_sweep *s = cookie;
	u8 ha[MAX_ADDR_LEN];
	u8 *hit;

	if ((n->dev != s->dev && n->dev != s->master) || READ_ONCE(n->dead) ||
	    !(READ_ONCE(n->nud_state) & NUD_VALID) ||
	    n->dev->addr_len != IPOIB_ADDR_LEN)
		return;
	neigh_ha_snapshot(ha, n, n->dev);
	/* the flags octet says what the peer takes, not who it is */
	ha[0] = 0;
	hit = bsearch(ha, s->addrs, s->n, IPOIB_ADDR_LEN, ipoib_cm_addr_cmp);
	if (hit)
		set_bit((hit - s->addrs) / IPOIB_ADDR_LEN, s->named);
}

/*
 * Which of the peers we send to over a live channel no usable ARP or ND
 * entry, on our interface or on the bond above it, holds any more: those
 * connected mode closes (ipoib_cm_close_unnamed). Each table is walked
 * once, outside connected mode's locks.
 */
static void ipoib_neigh_sweep_work(struct work_struct *work)
{
	struct ipoib_dev *priv = container_of(work, struct ipoib_dev,
					      neigh_sweep_work.work);
	struct ipoib_neigh_sweep s = { .dev = priv->dev };
	unsigned int i, max, unnamed = 0;

	max = ipoib_cm_tx_addrs(priv, NULL, 0);
	if (!max)
		return;
	/* room for a few more that start meanwhile; later ones wait */
	max += 8;
	s.addrs = kvmalloc_array(max, IPOIB_ADDR_LEN, GFP_KERNEL);
	s.named = bitmap_zalloc(max, GFP_KERNEL);
	if (!s.addrs || !s.named)
		goto out;
	s.n = min(ipoib_cm_tx_addrs(priv, s.addrs, max), max);
	sort(s.addrs, s.n, IPOIB_ADDR_LEN, ipoib_cm_addr_cmp, NULL);
	rcu_read_lock();
	s.master = netdev_master_upper_dev_get_rcu(priv->dev);
	rcu_read_unlock();
	neigh_for_each(&arp_tbl, ipoib_neigh_mark, &s);
#if IS_ENABLED(CONFIG_IPV6)
	if (ipv6_mod_enabled())
		neigh_for_each(&nd_tbl, ipoib_neigh_mark, &s);
#endif
	/* the unnamed ones, still sorted */
	for (i = 0; i < s.n; i++)
		if (!test_bit(i, s.named))
			memmove(s.addrs + IPOIB_ADDR_LEN * unnamed++,
				s.addrs + IPOIB_ADDR_LEN * i, IPOIB_ADDR_LEN);
	if (ipoib_cm_close_unnamed(priv, s.addrs, unnamed))
		queue_delayed_work(priv->wq, &priv->neigh_sweep_work,
				   IPOIB_NEIGH_RECHECK);
out:
	bitmap_free(s.named);
	kvfree(s.addrs);
}

/*
 * A neighbour of @priv's now holds @ha, which no live channel goes to: a
 * sweep soon. Under cm.lock, so that none is queued once ipoib_cm_stop()
 * cleared CM_UP and passed that lock (the sweep is cancelled after it).
 */
static void ipoib_neigh_moved(struct ipoib_dev *priv, const u8 *ha)
{
	if (READ_ONCE(priv->mode) != IPOIB_MODE_CONNECTED ||
	    delayed_work_pending(&priv->neigh_sweep_work) ||
	    ipoib_cm_sends_to(priv, ha))
		return;
	spin_lock_bh(&priv->cm.lock);
	if (test_bit(IPOIB_FLAG_CM_UP, &priv->flags))
		queue_delayed_work(priv->wq, &priv->neigh_sweep_work,
				   IPOIB_NEIGH_SWEEP_DELAY);
	spin_unlock_bh(&priv->cm.lock);
}

static int ipoib_neigh_lower(struct net_device *lower,
			     struct netdev_nested_priv *p)
{
	if (ipoib_is_ipoib(lower))
		ipoib_neigh_moved(ipoib_priv(lower), p->data);
	return 0;
}

/*
 * Any context. A neighbour entry on one of ours, or on the bond above
 * it, is usable and holds an address we send nothing to over a live
 * channel: perhaps its peer moved (RFC 4391's gratuitous ARP, or an
 * unsolicited NA, after the peer's bond failed over), leaving our
 * channel to its old address idle. Events that do not move anything
 * (state changes of entries we do not send to over a channel) cost one
 * sweep per burst. A bond's interfaces of ours are reached under RCU,
 * which unregistration waits for before their work queues go.
 */
static int ipoib_netevent(struct notifier_block *nb, unsigned long event,
			  void *ptr)
{
	struct netdev_nested_priv p;
	struct neighbour *n = ptr;
	u8 ha[MAX_ADDR_LEN];

	if (event != NETEVENT_NEIGH_UPDATE || READ_ONCE(n->dead) ||
	    n->dev->type != ARPHRD_INFINIBAND ||
	    n->dev->addr_len != IPOIB_ADDR_LEN ||
	    !(READ_ONCE(n->nud_state) & NUD_VALID))
		return NOTIFY_DONE;
	neigh_ha_snapshot(ha, n, n->dev);
	if (ipoib_is_ipoib(n->dev)) {
		ipoib_neigh_moved(ipoib_priv(n->dev), ha);
		return NOTIFY_DONE;
	}
	p.data = ha;
	rcu_read_lock();
	netdev_walk_all_lower_dev_rcu(n->dev, ipoib_neigh_lower, &p);
	rcu_read_unlock();
	return NOTIFY_DONE;
}

static struct notifier_block ipoib_netevent_notifier = {
	.notifier_call = ipoib_netevent,
};

int ipoib_neigh_register(void)
{
	return register_netevent_notifier(&ipoib_netevent_notifier);
}

void ipoib_neigh_unregister(void)
{
	unregister_netevent_notifier(&ipoib_netevent_notifier);
}

void ipoib_path_init(struct ipoib_dev *priv)
{
	spin_lock_init(&priv->path_lock);
	hash_init(priv->paths);
	INIT_DELAYED_WORK(&priv->path_gc_work, ipoib_path_gc_work);
	INIT_WORK(&priv->path_flush_work, ipoib_path_flush_work);
	INIT_DELAYED_WORK(&priv->neigh_sweep_work, ipoib_neigh_sweep_work);
}

void ipoib_path_cleanup(struct ipoib_dev *priv)
{
	cancel_delayed_work_sync(&priv->path_gc_work);
	cancel_work_sync(&priv->path_flush_work);
	cancel_delayed_work_sync(&priv->neigh_sweep_work);
	ipoib_path_evict(priv, true);
}

/*
 * Under the table's lock (BH off), which nests outside each entry's: an
 * entry of ours being resolved probes now, with its probes counted afresh.
 * Nothing else about it changes: its queue and state are left alone.
 */
static void ipoib_neigh_kick(struct neighbour *n, void *cookie)
{
	if (n->dev != cookie)
		return;
	write_lock(&n->lock);
	if ((n->nud_state & NUD_INCOMPLETE) &&
	    mod_timer_pending(&n->timer, jiffies))
		atomic_set(&n->probes, NEIGH_VAR(n->parms, UCAST_PROBES));
	write_unlock(&n->lock);
}

/*
 * The carrier came on (under RTNL). A neighbour being resolved while it
 * was off sent its probes into a stopped queue, and its next probe is up
 * to a second (retrans_time) away, or its resolution fails for want of
 * answers to probes never sent: it probes again now.
 */
void ipoib_neigh_carrier_on(struct net_device *dev)
{
	neigh_for_each(&arp_tbl, ipoib_neigh_kick, dev);
#if IS_ENABLED(CONFIG_IPV6)
	/* booted with ipv6.disable=1, nd_tbl was never set up */
	if (ipv6_mod_enabled())
		neigh_for_each(&nd_tbl, ipoib_neigh_kick, dev);
#endif
}

void ipoib_fs_show_path(struct ipoib_dev *priv, struct seq_file *m)
{
	struct ipoib_path *path;
	unsigned int bkt;

	rcu_read_lock();
	hash_for_each_rcu(priv->paths, bkt, path, node)
		seq_printf(m, "GID: %pI6c complete: %s DLID: 0x%04x SL: %u rate: %u MTU: %d\n",
			   path->dgid.raw,
			   READ_ONCE(path->state) == IPOIB_PATH_READY ?
			   "yes" : "no", path->dlid, path->sl, path->rate,
			   path->mtu ? ib_mtu_enum_to_int(path->mtu) : 0);
	rcu_read_unlock();
}
