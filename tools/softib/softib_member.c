// SPDX-License-Identifier: GPL-2.0
/*
 * softib_member: a multicast member that is not an IPoIB interface, for
 * the test bed only (loaded in guests, never installed). It joins one
 * group through the SA as FullMember, attaches a UD QP of its own to the
 * group's MLID and counts what arrives: the IPoIB driver's send-only
 * joins and sends must reach any member the SA knows, not only its own
 * kind (RFC 4391 s10).
 *
 * /sys/kernel/debug/softib_member:
 *   write "join DEV MGID"  join on DEV's port 1 (a group the SM does not
 *                          know is created with the broadcast group's
 *                          parameters, as RFC 4391 s10 asks)
 *   write "leave"          leave and free everything
 *   write "send QKEY ADDR PORT"
 *                          once joined: one IPv4 UDP datagram to ADDR:PORT
 *                          (the group's IPv4 address), sent to the group
 *                          with Q_Key QKEY, as an IPoIB peer would
 *   read                   state, MLID, Q_Key, datagrams received
 *
 * The broadcast group it takes the parameters from is the default
 * partition's (P_Key 0xffff, link-local scope). A membership the SA
 * drops (-ENETRESET) stays failed: the tests that use it have no SM
 * events.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_sa.h>
#include <rdma/ib_cache.h>

#define MEMBER_RECVS	16
/* a UD receive starts with the 40-octet GRH; IPoIB's MTU is at most 4096 */
#define MEMBER_BUF_LEN	(sizeof(struct ib_grh) + 4096)
#define MEMBER_PORT	1

enum member_state { MEMBER_IDLE, MEMBER_JOINING, MEMBER_JOINED,
		    MEMBER_FAILED };
static const char *const member_state_names[] = {
	"idle", "joining", "joined", "failed"
};

struct member_buf {
	struct ib_cqe cqe;
	void *data;
	u64 dma;
};

static struct {
	struct mutex lock;		/* join and leave, debugfs writes */
	/* release/acquire: mlid and attached are set when it says joined */
	enum member_state state;
	int status;
	bool stopping;			/* leave: receives are not reposted */
	struct ib_device *dev;		/* a reference while set */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_sa_multicast *sa_mc;
	union ib_gid mgid;
	u16 mlid;
	u32 qkey;
	bool attached;			/* set by the SA callback, then read */
	atomic_long_t rx;
	atomic_long_t rx_err;
	struct member_buf bufs[MEMBER_RECVS];
} m;

/* what "send" posts: IPoIB's 4-octet header, then IPv4 and UDP */
struct member_dgram {
	__be16 proto;
	__be16 reserved;
	struct iphdr ip;
	struct udphdr udp;
	char data[16];
} __packed;

struct member_send {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
};

static struct ib_sa_client member_sa;
static struct ib_client member_client;
static struct dentry *member_debugfs;

static int member_post_recv(struct member_buf *b)
{
	struct ib_sge sge = {
		.addr = b->dma,
		.length = MEMBER_BUF_LEN,
		.lkey = m.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &b->cqe, .sg_list = &sge,
				 .num_sge = 1 };

	return ib_post_recv(m.qp, &wr, NULL);
}

static void member_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct member_buf *b = container_of(wc->wr_cqe, struct member_buf, cqe);

	if (wc->status != IB_WC_SUCCESS) {
		/* a flush at leave, or a real error: count, do not repost */
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			atomic_long_inc(&m.rx_err);
		return;
	}
	atomic_long_inc(&m.rx);
	/* leave drains the receive queue before the QP goes */
	if (READ_ONCE(m.stopping))
		return;
	if (member_post_recv(b))
		atomic_long_inc(&m.rx_err);
}

/*
 * The SA's answer, in ib_sa's work. It must not take m.lock: leave holds
 * it while ib_sa_free_multicast() waits for this. The QP lives until
 * then, so attaching here is safe.
 */
static int member_joined(int status, struct ib_sa_multicast *sa_mc)
{
	u16 mlid = be16_to_cpu(sa_mc->rec.mlid);

	if (!status && !m.attached) {
		status = ib_attach_mcast(m.qp, &m.mgid, mlid);
		if (!status) {
			m.mlid = mlid;
			m.attached = true;
		}
	}
	WRITE_ONCE(m.status, status);
	/* publishes mlid and attached with it (member_show's acquire) */
	smp_store_release(&m.state, status ? MEMBER_FAILED : MEMBER_JOINED);
	return 0;
}

static int member_qp_ready(u16 pkey_index)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = pkey_index,
		.port_num = MEMBER_PORT,
		.qkey = m.qkey,
	};
	int ret;

	ret = ib_modify_qp(m.qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	ret = ib_modify_qp(m.qp, &attr, IB_QP_STATE);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ib_modify_qp(m.qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

static int member_verbs(void)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = MEMBER_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
	};
	int i;

	m.pd = ib_alloc_pd(m.dev, 0);
	if (IS_ERR(m.pd))
		return PTR_ERR(m.pd);
	/* the receives, the drain's marker, one send */
	m.cq = ib_alloc_cq(m.dev, NULL, MEMBER_RECVS + 2, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(m.cq))
		return PTR_ERR(m.cq);
	init.send_cq = m.cq;
	init.recv_cq = m.cq;
	init.cap.max_recv_wr += 1;	/* ib_drain_rq()'s marker */
	m.qp = ib_create_qp(m.pd, &init);
	if (IS_ERR(m.qp))
		return PTR_ERR(m.qp);
	for (i = 0; i < MEMBER_RECVS; i++) {
		struct member_buf *b = &m.bufs[i];

		b->cqe.done = member_recv_done;
		b->data = kmalloc(MEMBER_BUF_LEN, GFP_KERNEL);
		if (!b->data)
			return -ENOMEM;
		b->dma = ib_dma_map_single(m.dev, b->data, MEMBER_BUF_LEN,
					   DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(m.dev, b->dma)) {
			kfree(b->data);
			b->data = NULL;
			return -EIO;
		}
	}
	return 0;
}

/* Everything join set up, in reverse; under m.lock. */
static void member_leave(void)
{
	int i;

	if (m.sa_mc)
		ib_sa_free_multicast(m.sa_mc);	/* waits for its callback */
	m.sa_mc = NULL;
	if (m.attached)
		ib_detach_mcast(m.qp, &m.mgid, m.mlid);
	m.attached = false;
	/* every receive completes (flushed) before the QP and buffers go */
	WRITE_ONCE(m.stopping, true);
	if (!IS_ERR_OR_NULL(m.qp)) {
		ib_drain_rq(m.qp);
		ib_destroy_qp(m.qp);
	}
	m.qp = NULL;
	if (!IS_ERR_OR_NULL(m.cq))
		ib_free_cq(m.cq);
	m.cq = NULL;
	for (i = 0; i < MEMBER_RECVS; i++) {
		if (!m.bufs[i].data)
			continue;
		ib_dma_unmap_single(m.dev, m.bufs[i].dma, MEMBER_BUF_LEN,
				    DMA_FROM_DEVICE);
		kfree(m.bufs[i].data);
		m.bufs[i].data = NULL;
	}
	if (!IS_ERR_OR_NULL(m.pd))
		ib_dealloc_pd(m.pd);
	m.pd = NULL;
	if (m.dev)
		ib_device_put(m.dev);
	m.dev = NULL;
	m.state = MEMBER_IDLE;
	m.stopping = false;
}

/*
 * The group's parameters are the broadcast group's (RFC 4391 s10), as
 * ib_sa knows them from the IPoIB interface on this port.
 */
static int member_join(const char *devname, const char *mgid)
{
	static const u8 bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
				      0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	struct ib_sa_mcmember_rec bc, rec = {};
	union ib_gid bgid;
	u16 pkey_index;
	int i, ret;

	if (m.dev)
		return -EBUSY;
	if (!in6_pton(mgid, -1, m.mgid.raw, -1, NULL))
		return -EINVAL;
	m.dev = ib_device_get_by_name(devname, RDMA_DRIVER_UNKNOWN);
	if (!m.dev)
		return -ENODEV;
	/*
	 * A device being unregistered is still found by name; once our
	 * remove() has run (it waits for m.lock) it has no client data.
	 */
	if (!ib_get_client_data(m.dev, &member_client)) {
		ib_device_put(m.dev);
		m.dev = NULL;
		return -ENODEV;
	}
	atomic_long_set(&m.rx, 0);
	atomic_long_set(&m.rx_err, 0);
	m.status = 0;
	memcpy(bgid.raw, bcast, sizeof(bcast));
	ret = ib_sa_get_mcmember_rec(m.dev, MEMBER_PORT, &bgid, &bc);
	if (ret)
		goto fail;	/* no IPoIB interface joined on this port */
	ret = rdma_query_gid(m.dev, MEMBER_PORT, 0, &rec.port_gid);
	if (ret)
		goto fail;
	ret = ib_find_pkey(m.dev, MEMBER_PORT, be16_to_cpu(bc.pkey),
			   &pkey_index);
	if (ret)
		goto fail;
	m.qkey = be32_to_cpu(bc.qkey);
	ret = member_verbs();
	if (!ret)
		ret = member_qp_ready(pkey_index);
	for (i = 0; !ret && i < MEMBER_RECVS; i++)
		ret = member_post_recv(&m.bufs[i]);
	if (ret)
		goto fail;

	rec.mgid = m.mgid;
	rec.pkey = bc.pkey;
	rec.qkey = bc.qkey;
	rec.mtu_selector = IB_SA_EQ;
	rec.mtu = bc.mtu;
	rec.rate_selector = IB_SA_EQ;
	rec.rate = bc.rate;
	rec.sl = bc.sl;
	rec.flow_label = bc.flow_label;
	rec.traffic_class = bc.traffic_class;
	rec.hop_limit = bc.hop_limit;
	rec.join_state = 1;	/* FullMember */
	m.state = MEMBER_JOINING;
	m.sa_mc = ib_sa_join_multicast(&member_sa, m.dev, MEMBER_PORT, &rec,
				       IB_SA_MCMEMBER_REC_MGID |
				       IB_SA_MCMEMBER_REC_PORT_GID |
				       IB_SA_MCMEMBER_REC_PKEY |
				       IB_SA_MCMEMBER_REC_QKEY |
				       IB_SA_MCMEMBER_REC_MTU_SELECTOR |
				       IB_SA_MCMEMBER_REC_MTU |
				       IB_SA_MCMEMBER_REC_RATE_SELECTOR |
				       IB_SA_MCMEMBER_REC_RATE |
				       IB_SA_MCMEMBER_REC_SL |
				       IB_SA_MCMEMBER_REC_FLOW_LABEL |
				       IB_SA_MCMEMBER_REC_TRAFFIC_CLASS |
				       IB_SA_MCMEMBER_REC_HOP_LIMIT |
				       IB_SA_MCMEMBER_REC_JOIN_STATE,
				       GFP_KERNEL, member_joined, NULL);
	if (IS_ERR(m.sa_mc)) {
		ret = PTR_ERR(m.sa_mc);
		m.sa_mc = NULL;
		goto fail;
	}
	return 0;
fail:
	member_leave();
	return ret;
}

static void member_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct member_send *ms = container_of(wc->wr_cqe, struct member_send,
					      cqe);

	ms->status = wc->status;
	complete(&ms->done);
}

static void member_dgram(struct member_dgram *d, __be32 daddr, u16 port)
{
	memset(d, 0, sizeof(*d));
	d->proto = htons(ETH_P_IP);
	d->ip.version = 4;
	d->ip.ihl = 5;
	d->ip.tot_len = htons(sizeof(*d) - 4);
	d->ip.ttl = 1;
	d->ip.protocol = IPPROTO_UDP;
	d->ip.saddr = htonl(0x0a1e0063);	/* 10.30.0.99: on the link */
	d->ip.daddr = daddr;
	d->ip.check = ip_fast_csum(&d->ip, d->ip.ihl);
	d->udp.source = htons(port);
	d->udp.dest = htons(port);
	d->udp.len = htons(sizeof(d->udp) + sizeof(d->data));
	/* (UDP over IPv4 may go without a checksum) */
	strscpy(d->data, "softib_member", sizeof(d->data));
}

/*
 * One datagram to the group, under m.lock, waited for by its completion:
 * the receiving HCA takes it only if @qkey is the receiving QP's.
 */
static int member_send(u32 qkey, __be32 daddr, u16 port)
{
	struct member_send ms = { .cqe.done = member_send_done };
	struct rdma_ah_attr ah_attr;
	struct member_dgram *d;
	struct ib_ah *ah;
	struct ib_sge sge;
	struct ib_ud_wr wr = {
		.wr = { .wr_cqe = &ms.cqe, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qpn = 0xffffff,
		.remote_qkey = qkey,
	};
	int ret;

	/* member_joined()'s release: the SA's record is complete */
	if (smp_load_acquire(&m.state) != MEMBER_JOINED)
		return -ENOTCONN;
	init_completion(&ms.done);
	ret = ib_init_ah_from_mcmember(m.dev, MEMBER_PORT, &m.sa_mc->rec, NULL,
				       IB_GID_TYPE_IB, &ah_attr);
	if (ret)
		return ret;
	ah = rdma_create_ah(m.pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	rdma_destroy_ah_attr(&ah_attr);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	ret = -ENOMEM;
	d = kmalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		goto out_ah;
	member_dgram(d, daddr, port);
	sge.length = sizeof(*d);
	sge.lkey = m.pd->local_dma_lkey;
	sge.addr = ib_dma_map_single(m.dev, d, sizeof(*d), DMA_TO_DEVICE);
	ret = -EIO;
	if (ib_dma_mapping_error(m.dev, sge.addr))
		goto out_free;
	wr.ah = ah;
	ret = ib_post_send(m.qp, &wr.wr, NULL);
	if (!ret) {
		wait_for_completion(&ms.done);
		ret = ms.status == IB_WC_SUCCESS ? 0 : -EIO;
	}
	ib_dma_unmap_single(m.dev, sge.addr, sizeof(*d), DMA_TO_DEVICE);
out_free:
	kfree(d);
out_ah:
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	return ret;
}

static int member_show(struct seq_file *s, void *unused)
{
	enum member_state state;

	mutex_lock(&m.lock);
	/* mlid and attached as the SA callback published them */
	state = smp_load_acquire(&m.state);
	seq_printf(s, "state: %s\nstatus: %d\nattached: %d\nmlid: 0x%04x\nqkey: 0x%08x\nrx: %ld\nrx_err: %ld\n",
		   member_state_names[state], READ_ONCE(m.status),
		   state == MEMBER_JOINED && m.attached,
		   state == MEMBER_JOINED ? m.mlid : 0, m.qkey,
		   atomic_long_read(&m.rx), atomic_long_read(&m.rx_err));
	mutex_unlock(&m.lock);
	return 0;
}

static int member_open(struct inode *inode, struct file *file)
{
	return single_open(file, member_show, NULL);
}

static ssize_t member_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[96], dev[IB_DEVICE_NAME_MAX], mgid[INET6_ADDRSTRLEN];
	char addr[16];
	u32 qkey;
	u16 port;
	__be32 daddr;
	int ret;

	static_assert(IB_DEVICE_NAME_MAX == 64 && INET6_ADDRSTRLEN == 48,
		      "the widths in sscanf below");

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&m.lock);
	if (sysfs_streq(buf, "leave")) {
		member_leave();
		ret = 0;
	} else if (sscanf(buf, "join %63s %47s", dev, mgid) == 2) {
		ret = member_join(dev, mgid);
	} else if (sscanf(buf, "send %x %15s %hu", &qkey, addr, &port) == 3) {
		ret = in4_pton(addr, -1, (u8 *)&daddr, -1, NULL) ?
		      member_send(qkey, daddr, port) : -EINVAL;
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&m.lock);
	return ret ? ret : len;
}

static const struct file_operations member_fops = {
	.owner = THIS_MODULE,
	.open = member_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = member_write,
};

/*
 * Devices this client knows have client data; one going away takes the
 * member with it.
 */
static int member_add(struct ib_device *dev)
{
	ib_set_client_data(dev, &member_client, dev);
	return 0;
}

static void member_remove(struct ib_device *dev, void *client_data)
{
	mutex_lock(&m.lock);
	if (m.dev == dev)
		member_leave();
	mutex_unlock(&m.lock);
}

static struct ib_client member_client = {
	.name = "softib_member",
	.add = member_add,
	.remove = member_remove,
};

static int __init member_init(void)
{
	int ret;

	mutex_init(&m.lock);
	ib_sa_register_client(&member_sa);
	ret = ib_register_client(&member_client);
	if (ret) {
		ib_sa_unregister_client(&member_sa);
		return ret;
	}
	member_debugfs = debugfs_create_file("softib_member", 0600, NULL, NULL,
					     &member_fops);
	return 0;
}

static void __exit member_exit(void)
{
	debugfs_remove(member_debugfs);
	mutex_lock(&m.lock);
	member_leave();
	mutex_unlock(&m.lock);
	ib_unregister_client(&member_client);
	ib_sa_unregister_client(&member_sa);
}

module_init(member_init);
module_exit(member_exit);
MODULE_DESCRIPTION("softib_member: a non-IPoIB multicast member for ib_ipoib's tests");
MODULE_LICENSE("GPL");
