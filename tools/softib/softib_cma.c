// SPDX-License-Identifier: GPL-2.0
/*
 * softib_cma: an in-kernel rdma_cm listener and client, for the test bed
 * only (loaded in guests, never installed). On InfiniBand, rdma_cm asks
 * the IPoIB driver which interface an incoming REQ is for
 * (get_net_dev_by_params) and takes the listener whose address that
 * interface holds: this is how the tests see what the driver answers,
 * through a bond among others.
 *
 * /sys/kernel/debug/softib_cma, in the writer's network namespace:
 *   write "listen PORT"        a listener on any address, TCP port space;
 *                              it accepts every REQ
 *   write "connect ADDR PORT"  resolve, connect (RC), then disconnect;
 *                              the write returns once it is established,
 *                              or fails with what went wrong
 *   write "stop"               the listener and what it accepted go
 *   read                       listening port, connections accepted and
 *                              the interface rdma_cm bound the last one
 *                              to, and the same for the last connect
 *
 * No QP is made: the REQ and the REP name made-up QP numbers, which is
 * all rdma_cm needs to connect. An accepted connection lives until its
 * peer disconnects, its device goes, or "stop".
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/nsproxy.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/rdma_cm.h>

#define SOFTIB_CMA_WAIT	(10 * HZ)	/* per step of a connect */
/*
 * QP numbers said in REQs and REPs, never used: one of its own for each
 * connection, or ib_cm takes a second one from the same CA for a stale
 * connection (same remote QPN) while the first is still in time-wait
 */
static atomic_t softib_cma_qpn = ATOMIC_INIT(0x100000);

struct softib_cma_conn {
	struct list_head node;		/* sc.accepted, accepted_lock */
	struct rdma_cm_id *id;
	bool stopping;			/* accepted_lock: "stop" destroys it */
};

static struct {
	struct mutex lock;		/* writes; all below but "accepted" */
	struct rdma_cm_id *listener;
	u16 port;
	spinlock_t accepted_lock;	/* accepted, n_accepted, accepted_via */
	struct list_head accepted;
	unsigned int n_accepted;
	char accepted_via[IFNAMSIZ];
	char connected_via[IFNAMSIZ];
	int connect_status;
} sc;

static struct dentry *softib_cma_debugfs;

/* The name of the interface rdma_cm bound @id to, or "-" */
static void softib_cma_bound_name(struct rdma_cm_id *id, char *name)
{
	struct rdma_dev_addr *da = &id->route.addr.dev_addr;
	struct net_device *dev;

	strscpy(name, "-", IFNAMSIZ);
	if (!da->bound_dev_if || !da->net)
		return;
	dev = dev_get_by_index(da->net, da->bound_dev_if);
	if (dev) {
		strscpy(name, dev->name, IFNAMSIZ);
		dev_put(dev);
	}
}

/*
 * An accepted connection's events: disconnected, or its device going, it
 * is destroyed (non-zero makes rdma_cm do it), unless "stop" already
 * took it, which destroys it itself.
 */
static int softib_cma_conn_handler(struct rdma_cm_id *id,
				   struct rdma_cm_event *ev)
{
	struct softib_cma_conn *a = id->context;
	bool ours;

	if (ev->event != RDMA_CM_EVENT_DISCONNECTED &&
	    ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	spin_lock(&sc.accepted_lock);
	ours = !a->stopping;
	if (ours)
		list_del(&a->node);
	spin_unlock(&sc.accepted_lock);
	if (!ours)
		return 0;
	kfree(a);
	return 1;
}

/* The listener's: a REQ becomes a connection of ours, accepted at once */
static int softib_cma_listen_handler(struct rdma_cm_id *id,
				     struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = {
		.qp_num = atomic_inc_return(&softib_cma_qpn) & 0xffffff,
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};
	struct softib_cma_conn *a;
	char via[IFNAMSIZ];

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	/* id is the new connection's; non-zero makes rdma_cm destroy it */
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	id->event_handler = softib_cma_conn_handler;
	id->context = a;
	if (rdma_accept(id, &param)) {
		kfree(a);
		return -EINVAL;
	}
	softib_cma_bound_name(id, via);
	a->id = id;
	spin_lock(&sc.accepted_lock);
	list_add_tail(&a->node, &sc.accepted);
	sc.n_accepted++;
	memcpy(sc.accepted_via, via, IFNAMSIZ);
	spin_unlock(&sc.accepted_lock);
	return 0;
}

struct softib_cma_wait {
	struct completion done;
	enum rdma_cm_event_type event;
	int status;
};

static int softib_cma_connect_handler(struct rdma_cm_id *id,
				      struct rdma_cm_event *ev)
{
	struct softib_cma_wait *cc = id->context;

	/* without a QP, the REP asks us for the RTU (handler_mutex held) */
	if (ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
		cc->status = rdma_accept(id, NULL);
		cc->event = cc->status ? RDMA_CM_EVENT_CONNECT_ERROR :
					 RDMA_CM_EVENT_ESTABLISHED;
	} else {
		cc->event = ev->event;
		cc->status = ev->status;
	}
	complete(&cc->done);
	return 0;
}

/* Wait for @want after a step; the errno that says why it did not come */
static int softib_cma_step(struct softib_cma_wait *cc, enum rdma_cm_event_type want)
{
	if (!wait_for_completion_timeout(&cc->done, SOFTIB_CMA_WAIT))
		return -ETIMEDOUT;
	reinit_completion(&cc->done);
	if (cc->event == want)
		return 0;
	pr_info("softib_cma: %s (status %d) where %s was due\n",
		rdma_event_msg(cc->event), cc->status, rdma_event_msg(want));
	switch (cc->event) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return -EHOSTUNREACH;
	default:
		return cc->status < 0 ? cc->status : -EPROTO;
	}
}

static int softib_cma_connect(const char *addr, u16 port)
{
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	struct rdma_conn_param param = {
		.qp_num = atomic_inc_return(&softib_cma_qpn) & 0xffffff,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct softib_cma_wait cc = { .event = RDMA_CM_EVENT_ADDR_ERROR };
	struct rdma_cm_id *id;
	int ret;

	if (!in4_pton(addr, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	init_completion(&cc.done);
	id = rdma_create_id(current->nsproxy->net_ns, softib_cma_connect_handler,
			    &cc, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	strscpy(sc.connected_via, "-", IFNAMSIZ);
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 5000);
	if (!ret)
		ret = softib_cma_step(&cc, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ret)
		ret = rdma_resolve_route(id, 5000);
	if (!ret)
		ret = softib_cma_step(&cc, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ret)
		ret = rdma_connect(id, &param);
	if (!ret)
		ret = softib_cma_step(&cc, RDMA_CM_EVENT_ESTABLISHED);
	softib_cma_bound_name(id, sc.connected_via);
	if (!ret)
		rdma_disconnect(id);
	/* waits for a handler still running; none runs after it */
	rdma_destroy_id(id);
	return ret;
}

static int softib_cma_listen(u16 port)
{
	struct sockaddr_in any = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	struct rdma_cm_id *id;
	int ret;

	if (sc.listener)
		return -EBUSY;
	id = rdma_create_id(current->nsproxy->net_ns, softib_cma_listen_handler,
			    NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (!ret)
		ret = rdma_listen(id, 8);
	if (ret) {
		rdma_destroy_id(id);
		return ret;
	}
	sc.listener = id;
	sc.port = port;
	return 0;
}

static void softib_cma_stop(void)
{
	struct softib_cma_conn *a, *tmp;
	LIST_HEAD(gone);

	/* waits for a REQ being accepted: no new connection after this */
	if (sc.listener)
		rdma_destroy_id(sc.listener);
	sc.listener = NULL;
	sc.port = 0;
	spin_lock(&sc.accepted_lock);
	list_for_each_entry(a, &sc.accepted, node)
		a->stopping = true;
	list_splice_init(&sc.accepted, &gone);
	spin_unlock(&sc.accepted_lock);
	list_for_each_entry_safe(a, tmp, &gone, node) {
		rdma_destroy_id(a->id);
		kfree(a);
	}
}

static int softib_cma_show(struct seq_file *m, void *v)
{
	mutex_lock(&sc.lock);
	seq_printf(m, "listening: %u\n", sc.port);
	spin_lock(&sc.accepted_lock);
	seq_printf(m, "accepted: %u\naccepted_via: %s\n", sc.n_accepted,
		   sc.accepted_via);
	spin_unlock(&sc.accepted_lock);
	seq_printf(m, "connect_status: %d\nconnected_via: %s\n",
		   sc.connect_status, sc.connected_via);
	mutex_unlock(&sc.lock);
	return 0;
}

static int softib_cma_open(struct inode *inode, struct file *file)
{
	return single_open(file, softib_cma_show, NULL);
}

static ssize_t softib_cma_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	char buf[64], addr[16];
	u16 port;
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&sc.lock);
	if (sysfs_streq(buf, "stop")) {
		softib_cma_stop();
		ret = 0;
	} else if (sscanf(buf, "listen %hu", &port) == 1) {
		ret = softib_cma_listen(port);
	} else if (sscanf(buf, "connect %15s %hu", addr, &port) == 2) {
		ret = softib_cma_connect(addr, port);
		sc.connect_status = ret;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&sc.lock);
	return ret ? ret : len;
}

static const struct file_operations softib_cma_fops = {
	.owner = THIS_MODULE,
	.open = softib_cma_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = softib_cma_write,
};

static int __init softib_cma_init(void)
{
	mutex_init(&sc.lock);
	spin_lock_init(&sc.accepted_lock);
	INIT_LIST_HEAD(&sc.accepted);
	strscpy(sc.accepted_via, "-", IFNAMSIZ);
	strscpy(sc.connected_via, "-", IFNAMSIZ);
	softib_cma_debugfs = debugfs_create_file("softib_cma", 0600, NULL,
						 NULL, &softib_cma_fops);
	return 0;
}

static void __exit softib_cma_exit(void)
{
	debugfs_remove(softib_cma_debugfs);
	mutex_lock(&sc.lock);
	softib_cma_stop();
	mutex_unlock(&sc.lock);
}

module_init(softib_cma_init);
module_exit(softib_cma_exit);
MODULE_DESCRIPTION("softib_cma: an rdma_cm listener and client for ib_ipoib's tests");
MODULE_LICENSE("GPL");
