// SPDX-License-Identifier: GPL-2.0
/*
 * softib: a soft InfiniBand HCA, for ib_ipoib's test bed only. It is
 * loaded in test guests and never installed. See softib.h for the shape
 * and Documentation/testing.rst for what it models and what it does not.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "softib.h"

static unsigned int devices = 2;
module_param(devices, uint, 0444);
MODULE_PARM_DESC(devices, "softib devices, one port each, cabled in pairs (even, default 2)");

#define SOFTIB_MAX_DEVICES	16

static struct softib_dev *softib_devs[SOFTIB_MAX_DEVICES];
static struct dentry *softib_debugfs;

/*
 * The order ULPs expect: a port is gone before its new LID is news. The
 * names are debugfs's, for the tests that count events.
 */
static const struct {
	enum ib_event_type type;
	const char *name;
} softib_events[] = {
	{ IB_EVENT_PORT_ERR, "event_port_err" },
	{ IB_EVENT_LID_CHANGE, "event_lid_change" },
	{ IB_EVENT_PKEY_CHANGE, "event_pkey_change" },
	{ IB_EVENT_GID_CHANGE, "event_gid_change" },
	{ IB_EVENT_SM_CHANGE, "event_sm_change" },
	{ IB_EVENT_CLIENT_REREGISTER, "event_client_rereg" },
	{ IB_EVENT_PORT_ACTIVE, "event_port_active" },
};

static_assert(ARRAY_SIZE(softib_events) == SOFTIB_EVENT_KINDS);

/*
 * Port events leave process_mad first (the SM gets its reply) and are
 * dispatched from event_work, coalesced; ACTIVE only if the port still is.
 */
static void softib_event_work(struct work_struct *work)
{
	struct softib_dev *sdev = container_of(work, struct softib_dev,
					       event_work);
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};
	unsigned int i;
	u32 pending;
	u8 state;

	spin_lock_irq(&sdev->event_lock);
	pending = sdev->pending_events;
	sdev->pending_events = 0;
	spin_unlock_irq(&sdev->event_lock);
	spin_lock_irq(&sdev->port.lock);
	state = sdev->port.state;
	spin_unlock_irq(&sdev->port.lock);
	if (state != SOFTIB_PORT_ACTIVE)
		pending &= ~BIT(IB_EVENT_PORT_ACTIVE);
	for (i = 0; i < ARRAY_SIZE(softib_events); i++) {
		if (!(pending & BIT(softib_events[i].type)))
			continue;
		ev.event = softib_events[i].type;
		atomic64_inc(&sdev->port.stats.events[i]);
		ib_dispatch_event(&ev);
	}
}

void softib_port_event(struct softib_dev *sdev, enum ib_event_type type)
{
	unsigned long flags;

	spin_lock_irqsave(&sdev->event_lock, flags);
	if (!sdev->dying) {
		sdev->pending_events |= BIT(type);
		queue_work(system_unbound_wq, &sdev->event_work);
	}
	spin_unlock_irqrestore(&sdev->event_lock, flags);
}

static int softib_query_device(struct ib_device *ibdev,
			       struct ib_device_attr *attr,
			       struct ib_udata *udata)
{
	if (udata && udata->inlen)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 1;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_part_id = 0x5342;
	attr->max_qp = SOFTIB_MAX_QP;
	attr->max_qp_wr = SOFTIB_MAX_WR;
	attr->max_send_sge = SOFTIB_MAX_SGE;
	attr->max_recv_sge = SOFTIB_MAX_SGE;
	attr->max_sge_rd = SOFTIB_MAX_SGE;
	attr->max_cq = SOFTIB_MAX_QP * 2;
	attr->max_cqe = SOFTIB_MAX_CQE;
	attr->max_mr = SOFTIB_MAX_QP;
	attr->max_pd = SOFTIB_MAX_QP;
	attr->max_srq = SOFTIB_MAX_QP;
	attr->max_srq_wr = SOFTIB_MAX_WR;
	attr->max_srq_sge = SOFTIB_MAX_SGE;
	attr->max_ah = SOFTIB_MAX_QP * 16;
	attr->max_pkeys = SOFTIB_PKEYS;
	attr->max_mcast_grp = 8192;
	attr->max_mcast_qp_attach = SOFTIB_MAX_MCAST_QP;
	attr->max_total_mcast_qp_attach = 8192 * SOFTIB_MAX_MCAST_QP;
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int softib_query_port(struct ib_device *ibdev, u32 port_num,
			     struct ib_port_attr *attr)
{
	struct softib_port *port = &to_sdev(ibdev)->port;
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	spin_lock_irqsave(&port->lock, flags);
	attr->state = (enum ib_port_state)port->state;
	attr->phys_state = port->peer ? IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_POLLING;
	attr->max_mtu = SOFTIB_MTU;
	attr->active_mtu = port->neighbor_mtu;
	attr->gid_tbl_len = SOFTIB_GUIDS;
	attr->port_cap_flags = port->cap_mask;
	attr->max_msg_sz = SOFTIB_MAX_MSG;
	attr->bad_pkey_cntr = port->pkey_violations;
	attr->qkey_viol_cntr = port->qkey_violations;
	attr->pkey_tbl_len = SOFTIB_PKEYS;
	attr->lid = port->lid;
	attr->sm_lid = port->sm_lid;
	attr->lmc = port->lmc;
	attr->max_vl_num = 1;
	attr->sm_sl = port->sm_sl;
	attr->subnet_timeout = port->subnet_timeout;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_QDR;
	spin_unlock_irqrestore(&port->lock, flags);
	return 0;
}

/* clients set capability bits: ib_cm CM_SUP, umad's issm device SM */
static int softib_modify_port(struct ib_device *ibdev, u32 port_num,
			      int mask, struct ib_port_modify *pm)
{
	struct softib_port *port = &to_sdev(ibdev)->port;
	unsigned long flags;

	spin_lock_irqsave(&port->lock, flags);
	port->cap_mask |= pm->set_port_cap_mask;
	port->cap_mask &= ~pm->clr_port_cap_mask;
	if (mask & IB_PORT_RESET_QKEY_CNTR)
		port->qkey_violations = 0;
	spin_unlock_irqrestore(&port->lock, flags);
	return 0;
}

static int softib_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			    union ib_gid *gid)
{
	struct softib_port *port = &to_sdev(ibdev)->port;
	unsigned long flags;

	if (index < 0 || index >= SOFTIB_GUIDS)
		return -EINVAL;
	spin_lock_irqsave(&port->lock, flags);
	gid->global.subnet_prefix = port->gid_prefix;
	gid->global.interface_id = port->guids[index];
	spin_unlock_irqrestore(&port->lock, flags);
	return 0;
}

static int softib_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			     u16 *pkey)
{
	struct softib_port *port = &to_sdev(ibdev)->port;
	unsigned long flags;

	if (index >= SOFTIB_PKEYS)
		return -EINVAL;
	spin_lock_irqsave(&port->lock, flags);
	*pkey = port->pkeys[index];
	spin_unlock_irqrestore(&port->lock, flags);
	return 0;
}

static int softib_port_immutable(struct ib_device *ibdev, u32 port_num,
				 struct ib_port_immutable *im)
{
	im->pkey_tbl_len = SOFTIB_PKEYS;
	im->gid_tbl_len = SOFTIB_GUIDS;
	im->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int softib_alloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return udata ? -EOPNOTSUPP : 0;
}

static int softib_dealloc_pd(struct ib_pd *pd, struct ib_udata *udata)
{
	return 0;
}

static int softib_create_ah(struct ib_ah *ibah,
			    struct rdma_ah_init_attr *init,
			    struct ib_udata *udata)
{
	if (init->ah_attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	to_sah(ibah)->attr = *init->ah_attr;
	return 0;
}

static int softib_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_sah(ibah)->attr;
	return 0;
}

static int softib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}

/* Virtual DMA: every key means "kernel virtual addresses" */
static struct ib_mr *softib_get_dma_mr(struct ib_pd *pd, int access)
{
	struct softib_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return ERR_PTR(-ENOMEM);
	return &mr->ibmr;
}

static struct ib_mr *softib_reg_user_mr(struct ib_pd *pd, u64 start,
					u64 length, u64 virt, int access,
					struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int softib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	kfree(container_of(ibmr, struct softib_mr, ibmr));
	return 0;
}

static const struct ib_device_ops softib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.query_device = softib_query_device,
	.query_port = softib_query_port,
	.modify_port = softib_modify_port,
	.query_gid = softib_query_gid,
	.query_pkey = softib_query_pkey,
	.get_port_immutable = softib_port_immutable,
	.process_mad = softib_process_mad,
	.alloc_pd = softib_alloc_pd,
	.dealloc_pd = softib_dealloc_pd,
	.create_ah = softib_create_ah,
	.query_ah = softib_query_ah,
	.destroy_ah = softib_destroy_ah,
	.get_dma_mr = softib_get_dma_mr,
	.reg_user_mr = softib_reg_user_mr,
	.dereg_mr = softib_dereg_mr,
	INIT_RDMA_OBJ_SIZE(ib_pd, softib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ah, softib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, softib_cq, ibcq),
};

static int softib_counters_show(struct seq_file *m, void *unused)
{
	struct softib_dev *sdev = m->private;
	struct softib_counters *c = &sdev->port.stats;

	const struct {
		const char *name;
		atomic64_t *v;
	} rows[] = {
		{ "tx_packets", &c->tx_packets },
		{ "rx_packets", &c->rx_packets },
		{ "drop_link", &c->drop_link },
		{ "drop_dlid", &c->drop_dlid },
		{ "drop_qpn", &c->drop_qpn },
		{ "drop_pkey", &c->drop_pkey },
		{ "drop_qkey", &c->drop_qkey },
		{ "drop_no_recv", &c->drop_no_recv },
		{ "drop_len", &c->drop_len },
		{ "drop_seq", &c->drop_seq },
		{ "rnr_naks", &c->rnr_naks },
		{ "retransmits", &c->retransmits },
		{ "cq_overflow", &c->cq_overflow },
		{ "bad_mad", &c->bad_mad },
		{ "lost_cm_rtu", &c->lost_cm_rtu },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		seq_printf(m, "%-14s %lld\n", rows[i].name,
			   atomic64_read(rows[i].v));
	for (i = 0; i < ARRAY_SIZE(softib_events); i++)
		seq_printf(m, "%-14s %lld\n", softib_events[i].name,
			   atomic64_read(&c->events[i]));
	/* one row per table entry that received: rx_pkey_<its P_Key> */
	for (i = 0; i < SOFTIB_PKEYS; i++)
		if (atomic64_read(&c->rx_pkey[i]))
			seq_printf(m, "rx_pkey_%04x   %lld\n",
				   READ_ONCE(sdev->port.pkeys[i]),
				   atomic64_read(&c->rx_pkey[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(softib_counters);

static int softib_lose_get(void *data, u64 *val)
{
	*val = atomic_read(data);
	return 0;
}

static int softib_lose_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(softib_lose_fops, softib_lose_get, softib_lose_set,
			 "%llu\n");

static struct softib_dev *softib_new(unsigned int index)
{
	struct softib_dev *sdev;
	__be64 guid;

	sdev = ib_alloc_device(softib_dev, ibdev);
	if (!sdev)
		return NULL;
	sdev->index = index;
	/* locally administered EUI-64s: 02:00:53:42:00:00:<index>:<0 or 1> */
	guid = cpu_to_be64(0x0200534200000000ULL | index << 8);
	sdev->ibdev.node_guid = guid;
	sdev->port.sdev = sdev;
	spin_lock_init(&sdev->port.lock);
	softib_sma_init(&sdev->port, cpu_to_be64(be64_to_cpu(guid) | 1));
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	sdev->next_qpn = 0x11;
	spin_lock_init(&sdev->deliver_lock);
	INIT_LIST_HEAD(&sdev->groups);
	spin_lock_init(&sdev->rx_lock);
	INIT_LIST_HEAD(&sdev->rx_queue);
	INIT_WORK(&sdev->rx_work, softib_rx_work);
	spin_lock_init(&sdev->event_lock);
	INIT_WORK(&sdev->event_work, softib_event_work);

	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = 1;
	sdev->ibdev.local_dma_lkey = 0;
	snprintf(sdev->ibdev.node_desc, sizeof(sdev->ibdev.node_desc),
		 "softib%u (test only)", index);
	ib_set_device_ops(&sdev->ibdev, &softib_dev_ops);
	ib_set_device_ops(&sdev->ibdev, &softib_qp_ops);
	ib_set_device_ops(&sdev->ibdev, &softib_cq_ops);
	return sdev;
}

/* Plug or pull the cable between @a and @b: both ports INIT, or DOWN */
static void softib_cable(struct softib_dev *a, struct softib_dev *b,
			 bool plug)
{
	struct softib_port *ports[] = { &a->port, &b->port };
	int i;

	for (i = 0; i < 2; i++) {
		struct softib_port *p = ports[i];
		bool was_active;

		spin_lock_irq(&p->lock);
		was_active = p->state == SOFTIB_PORT_ACTIVE;
		p->peer = plug ? ports[!i] : NULL;
		p->state = plug ? SOFTIB_PORT_INIT : SOFTIB_PORT_DOWN;
		spin_unlock_irq(&p->lock);
		if (was_active)
			softib_port_event(p->sdev, IB_EVENT_PORT_ERR);
	}
}

/*
 * debugfs softibN_cable (N even): 1 while N and N+1 are cabled; a test
 * writes 0 to pull that cable (both ports DOWN, as a real pull takes both
 * ends) and 1 to plug it back (both INIT, for the SM to bring ACTIVE).
 */
static DEFINE_MUTEX(softib_cable_mutex);

static int softib_cable_get(void *data, u64 *val)
{
	struct softib_dev *a = data;

	spin_lock_irq(&a->port.lock);
	*val = !!a->port.peer;
	spin_unlock_irq(&a->port.lock);
	return 0;
}

static int softib_cable_set(void *data, u64 val)
{
	struct softib_dev *a = data;
	u64 was;

	if (val > 1)
		return -EINVAL;
	mutex_lock(&softib_cable_mutex);
	/* as it is: nothing happens (a real cable is not pulled twice) */
	if (softib_cable_get(a, &was) == 0 && was != val)
		softib_cable(a, softib_devs[a->index + 1], val);
	mutex_unlock(&softib_cable_mutex);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(softib_cable_fops, softib_cable_get,
			 softib_cable_set, "%llu\n");

static void softib_remove(struct softib_dev *sdev)
{
	debugfs_remove(sdev->debugfs_lose);
	debugfs_remove(sdev->debugfs);
	/* no event may reach ib_core's work queue once it is flushed */
	spin_lock_irq(&sdev->event_lock);
	sdev->dying = true;
	spin_unlock_irq(&sdev->event_lock);
	cancel_work_sync(&sdev->event_work);
	ib_unregister_device(&sdev->ibdev);
	softib_wire_flush(sdev);
	WARN_ON(!xa_empty(&sdev->qps));
	xa_destroy(&sdev->qps);
	ib_dealloc_device(&sdev->ibdev);
}

static void softib_exit(void)
{
	unsigned int i;

	/* no test plugs a cable back in while they go */
	for (i = 0; i < SOFTIB_MAX_DEVICES; i++)
		if (softib_devs[i])
			debugfs_remove(softib_devs[i]->debugfs_cable);
	for (i = 0; i + 1 < SOFTIB_MAX_DEVICES; i += 2)
		if (softib_devs[i] && softib_devs[i + 1])
			softib_cable(softib_devs[i], softib_devs[i + 1], false);
	for (i = 0; i < SOFTIB_MAX_DEVICES; i++) {
		if (!softib_devs[i])
			continue;
		softib_remove(softib_devs[i]);
		softib_devs[i] = NULL;
	}
	debugfs_remove_recursive(softib_debugfs);
}

static int __init softib_init(void)
{
	char name[IB_DEVICE_NAME_MAX];
	unsigned int i;
	int err;

	if (!devices || devices % 2 || devices > SOFTIB_MAX_DEVICES) {
		pr_err("softib: devices=%u: an even number up to %u\n",
		       devices, SOFTIB_MAX_DEVICES);
		return -EINVAL;
	}
	softib_debugfs = debugfs_create_dir("softib", NULL);
	for (i = 0; i < devices; i++) {
		struct softib_dev *sdev = softib_new(i);

		if (!sdev) {
			err = -ENOMEM;
			goto fail;
		}
		snprintf(name, sizeof(name), "softib%u", i);
		err = ib_register_device(&sdev->ibdev, name, NULL);
		if (err) {
			pr_err("softib: registering %s: %d\n", name, err);
			ib_dealloc_device(&sdev->ibdev);
			goto fail;
		}
		softib_devs[i] = sdev;
		sdev->debugfs = debugfs_create_file(name, 0444, softib_debugfs,
						    sdev, &softib_counters_fops);
		/* the lost-RTU test (COMM_EST) writes how many to lose */
		strlcat(name, "_lose_cm_rtu", sizeof(name));
		sdev->debugfs_lose =
			debugfs_create_file_unsafe(name, 0644, softib_debugfs,
						   &sdev->port.lose_cm_rtu,
						   &softib_lose_fops);
	}
	for (i = 0; i < devices; i += 2) {
		softib_cable(softib_devs[i], softib_devs[i + 1], true);
		snprintf(name, sizeof(name), "softib%u_cable", i);
		softib_devs[i]->debugfs_cable =
			debugfs_create_file_unsafe(name, 0644, softib_debugfs,
						   softib_devs[i],
						   &softib_cable_fops);
	}
	return 0;
fail:
	softib_exit();
	return err;
}

module_init(softib_init);
module_exit(softib_exit);
MODULE_DESCRIPTION("soft InfiniBand HCA for ib_ipoib's tests (never for use)");
MODULE_LICENSE("GPL");
