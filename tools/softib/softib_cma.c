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
 * No QP is made: the REP and the RTU go with a made-up QP number, which
 * is all rdma_cm needs to connect. Accepted connections are kept until
 * "stop" (or unload): a device with them cannot go before.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/nsproxy.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <rdma/rdma_cm.h>

#define CMA_WAIT	(10 * HZ)	/* per step of a connect */
#define CMA_QPN		0xc0ffee	/* said in the REQ and REP, never used */

struct cma_accepted {
	struct list_head node;
	struct rdma_cm_id *id;
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
} c;

static struct dentry *cma_debugfs;

/* The name of the interface rdma_cm bound @id to, or "-" */
static void cma_bound_name(struct rdma_cm_id *id, char *name)
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

/* An accepted connection's events: it lives until "stop" */
static int cma_accepted_handler(struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	return 0;
}

/* The listener's: a REQ becomes a connection of ours, accepted at once */
static int cma_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = {
		.qp_num = CMA_QPN,
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};
	struct cma_accepted *a;
	char via[IFNAMSIZ];

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 0;
	/* id is the new connection's; non-zero makes rdma_cm destroy it */
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	id->event_handler = cma_accepted_handler;
	id->context = a;
	if (rdma_accept(id, &param)) {
		kfree(a);
		return -EINVAL;
	}
	cma_bound_name(id, via);
	a->id = id;
	spin_lock(&c.accepted_lock);
	list_add_tail(&a->node, &c.accepted);
	c.n_accepted++;
	memcpy(c.accepted_via, via, IFNAMSIZ);
	spin_unlock(&c.accepted_lock);
	return 0;
}

struct cma_connect {
	struct completion done;
	enum rdma_cm_event_type event;
	int status;
};

static int cma_connect_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cma_connect *cc = id->context;

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
static int cma_step(struct cma_connect *cc, enum rdma_cm_event_type want)
{
	if (!wait_for_completion_timeout(&cc->done, CMA_WAIT))
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

static int cma_connect(const char *addr, u16 port)
{
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	struct rdma_conn_param param = {
		.qp_num = CMA_QPN,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct cma_connect cc = { .event = RDMA_CM_EVENT_ADDR_ERROR };
	struct rdma_cm_id *id;
	int ret;

	if (!in4_pton(addr, -1, (u8 *)&dst.sin_addr.s_addr, -1, NULL))
		return -EINVAL;
	init_completion(&cc.done);
	id = rdma_create_id(current->nsproxy->net_ns, cma_connect_handler,
			    &cc, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	strscpy(c.connected_via, "-", IFNAMSIZ);
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 5000);
	if (!ret)
		ret = cma_step(&cc, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ret)
		ret = rdma_resolve_route(id, 5000);
	if (!ret)
		ret = cma_step(&cc, RDMA_CM_EVENT_ROUTE_RESOLVED);
	if (!ret)
		ret = rdma_connect(id, &param);
	if (!ret)
		ret = cma_step(&cc, RDMA_CM_EVENT_ESTABLISHED);
	cma_bound_name(id, c.connected_via);
	if (!ret)
		rdma_disconnect(id);
	/* waits for a handler still running; none runs after it */
	rdma_destroy_id(id);
	return ret;
}

static int cma_listen(u16 port)
{
	struct sockaddr_in any = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
	};
	struct rdma_cm_id *id;
	int ret;

	if (c.listener)
		return -EBUSY;
	id = rdma_create_id(current->nsproxy->net_ns, cma_listen_handler,
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
	c.listener = id;
	c.port = port;
	return 0;
}

static void cma_stop(void)
{
	struct cma_accepted *a, *tmp;
	LIST_HEAD(gone);

	/* waits for a REQ being accepted: no new connection after this */
	if (c.listener)
		rdma_destroy_id(c.listener);
	c.listener = NULL;
	c.port = 0;
	spin_lock(&c.accepted_lock);
	list_splice_init(&c.accepted, &gone);
	spin_unlock(&c.accepted_lock);
	list_for_each_entry_safe(a, tmp, &gone, node) {
		rdma_destroy_id(a->id);
		kfree(a);
	}
}

static int cma_show(struct seq_file *m, void *v)
{
	mutex_lock(&c.lock);
	seq_printf(m, "listening: %u\n", c.port);
	spin_lock(&c.accepted_lock);
	seq_printf(m, "accepted: %u\naccepted_via: %s\n", c.n_accepted,
		   c.accepted_via);
	spin_unlock(&c.accepted_lock);
	seq_printf(m, "connect_status: %d\nconnected_via: %s\n",
		   c.connect_status, c.connected_via);
	mutex_unlock(&c.lock);
	return 0;
}

static int cma_open(struct inode *inode, struct file *file)
{
	return single_open(file, cma_show, NULL);
}

static ssize_t cma_write(struct file *file, const char __user *ubuf,
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
	mutex_lock(&c.lock);
	if (sysfs_streq(buf, "stop")) {
		cma_stop();
		ret = 0;
	} else if (sscanf(buf, "listen %hu", &port) == 1) {
		ret = cma_listen(port);
	} else if (sscanf(buf, "connect %15s %hu", addr, &port) == 2) {
		ret = cma_connect(addr, port);
		c.connect_status = ret;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&c.lock);
	return ret ? ret : len;
}

static const struct file_operations cma_fops = {
	.owner = THIS_MODULE,
	.open = cma_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = cma_write,
};

static int __init cma_init(void)
{
	mutex_init(&c.lock);
	spin_lock_init(&c.accepted_lock);
	INIT_LIST_HEAD(&c.accepted);
	strscpy(c.accepted_via, "-", IFNAMSIZ);
	strscpy(c.connected_via, "-", IFNAMSIZ);
	cma_debugfs = debugfs_create_file("softib_cma", 0600, NULL, NULL,
					  &cma_fops);
	return 0;
}

static void __exit cma_exit(void)
{
	debugfs_remove(cma_debugfs);
	mutex_lock(&c.lock);
	cma_stop();
	mutex_unlock(&c.lock);
}

module_init(cma_init);
module_exit(cma_exit);
MODULE_DESCRIPTION("softib_cma: an rdma_cm listener and client for ib_ipoib's tests");
MODULE_LICENSE("GPL");
