// SPDX-License-Identifier: GPL-2.0
/*
 * The Subnet Management Agent of a softib port (IBA chapter 14): the
 * subnet management attributes opensm reads and writes while it sweeps,
 * answered behind process_mad. ib_mad has already checked the directed
 * route fields and will send what we return as the reply. Not modelled:
 * M_Key protection (the key is stored and reported, never enforced) and
 * traps (the SM finds changes by polling).
 */
#include "softib.h"

#define SOFTIB_DEVICE_ID	0x5342	/* "SB": no real vendor's part */
#define SOFTIB_BLOCK_PKEYS	32	/* P_Keys per P_KeyTable block */
#define SOFTIB_BLOCK_GUIDS	8	/* GUIDs per GUIDInfo block */

/* PortInfo nibbles and widths (IBA 14.2.5.6) */
#define SOFTIB_WIDTH_4X		2
#define SOFTIB_SPEEDS		0x7	/* 2.5, 5 and 10 Gb/s per lane */
#define SOFTIB_SPEED_10G	0x4
#define SOFTIB_PHYS_POLLING	2
#define SOFTIB_PHYS_LINKUP	5
#define SOFTIB_VL0_ONLY		1
#define SOFTIB_RESP_TIME	8	/* 4.096 us << 8 = 1 ms */

/* the capabilities the port has before any kernel client sets its own */
#define SOFTIB_CAP_BASE		(IB_PORT_SYS_IMAGE_GUID_SUP | \
				 IB_PORT_CLIENT_REG_SUP)

void softib_sma_init(struct softib_port *port, __be64 port_guid)
{
	port->state = SOFTIB_PORT_DOWN;
	port->neighbor_mtu = SOFTIB_MTU;
	port->cap_mask = SOFTIB_CAP_BASE;
	port->gid_prefix = cpu_to_be64(0xfe80000000000000ULL);
	port->guids[0] = port_guid;
	/* until an SM programs it, the default partition, as HCAs boot */
	port->pkeys[0] = 0xffff;
	port->resp_time = SOFTIB_RESP_TIME;
	port->subnet_timeout = 18;
}

/* the state PortInfo and query_port report (port->lock held) */
static u8 softib_phys_state(struct softib_port *port)
{
	return port->peer ? SOFTIB_PHYS_LINKUP : SOFTIB_PHYS_POLLING;
}

static void softib_get_port_info(struct softib_port *port, u8 *data)
{
	struct ib_port_info *pi = (struct ib_port_info *)data;

	memset(data, 0, IB_SMP_DATA_SIZE);
	pi->mkey = port->mkey;
	pi->gid_prefix = port->gid_prefix;
	pi->lid = cpu_to_be16(port->lid);
	pi->sm_lid = cpu_to_be16(port->sm_lid);
	pi->cap_mask = cpu_to_be32(port->cap_mask);
	pi->mkey_lease_period = cpu_to_be16(port->mkey_lease);
	pi->local_port_num = 1;
	pi->link_width_enabled = SOFTIB_WIDTH_4X;
	pi->link_width_supported = SOFTIB_WIDTH_4X;
	pi->link_width_active = SOFTIB_WIDTH_4X;
	pi->linkspeed_portstate = SOFTIB_SPEEDS << 4 | port->state;
	pi->portphysstate_linkdown = softib_phys_state(port) << 4 |
				     SOFTIB_PHYS_POLLING;
	pi->mkeyprot_resv_lmc = port->mkey_prot << 6 | port->lmc;
	pi->linkspeedactive_enabled = SOFTIB_SPEED_10G << 4 | SOFTIB_SPEEDS;
	pi->neighbormtu_mastersmsl = port->neighbor_mtu << 4 | port->sm_sl;
	pi->vlcap_inittype = SOFTIB_VL0_ONLY << 4;
	pi->vl_high_limit = port->vl_high_limit;
	pi->inittypereply_mtucap = SOFTIB_MTU;
	pi->operationalvl_pei_peo_fpi_fpo = SOFTIB_VL0_ONLY << 4;
	pi->mkey_violations = cpu_to_be16(port->mkey_violations);
	pi->pkey_violations = cpu_to_be16(port->pkey_violations);
	pi->qkey_violations = cpu_to_be16(port->qkey_violations);
	pi->guid_cap = SOFTIB_GUIDS;
	pi->clientrereg_resv_subnetto = port->subnet_timeout & 0x1f;
	pi->resv_resptimevalue = port->resp_time & 0x1f;
}

/*
 * PortInfo Set (port->lock held): apply what a CA lets the SM write and
 * return the events that follow, or -EINVAL for a state change the port
 * state machine does not allow (IBA 7.2): DOWN from anywhere, ARMED from
 * INIT, ACTIVE from ARMED.
 */
static int softib_set_port_info(struct softib_port *port, const u8 *data,
				u32 *events)
{
	const struct ib_port_info *pi = (const struct ib_port_info *)data;
	u8 want = pi->linkspeed_portstate & 0xf;
	u8 mtu = pi->neighbormtu_mastersmsl >> 4;
	u16 lid = be16_to_cpu(pi->lid);
	u16 sm_lid = be16_to_cpu(pi->sm_lid);
	u8 sm_sl = pi->neighbormtu_mastersmsl & 0xf;
	u8 old = port->state;

	switch (want) {
	case SOFTIB_PORT_NOP:
		break;
	case SOFTIB_PORT_DOWN:
		break;
	case SOFTIB_PORT_ARMED:
		if (old != SOFTIB_PORT_INIT && old != SOFTIB_PORT_ARMED)
			return -EINVAL;
		break;
	case SOFTIB_PORT_ACTIVE:
		if (old != SOFTIB_PORT_ARMED && old != SOFTIB_PORT_ACTIVE)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (softib_lid_mcast(lid) || lid == 0xffff ||
	    mtu < IB_MTU_256 || mtu > SOFTIB_MTU)
		return -EINVAL;

	port->mkey = pi->mkey;
	if (port->gid_prefix != pi->gid_prefix) {
		port->gid_prefix = pi->gid_prefix;
		*events |= BIT(IB_EVENT_GID_CHANGE);
	}
	if (port->lid != lid || port->lmc != (pi->mkeyprot_resv_lmc & 7)) {
		port->lid = lid;
		port->lmc = pi->mkeyprot_resv_lmc & 7;
		*events |= BIT(IB_EVENT_LID_CHANGE);
	}
	if (port->sm_lid != sm_lid || port->sm_sl != sm_sl) {
		port->sm_lid = sm_lid;
		port->sm_sl = sm_sl;
		*events |= BIT(IB_EVENT_SM_CHANGE);
	}
	port->mkey_lease = be16_to_cpu(pi->mkey_lease_period);
	port->mkey_prot = pi->mkeyprot_resv_lmc >> 6;
	port->neighbor_mtu = mtu;
	port->vl_high_limit = pi->vl_high_limit;
	port->subnet_timeout = pi->clientrereg_resv_subnetto & 0x1f;
	/* writing the counters resets them (IBA 14.2.5.6, C14-21.1) */
	if (!pi->mkey_violations)
		port->mkey_violations = 0;
	if (!pi->pkey_violations)
		port->pkey_violations = 0;
	if (!pi->qkey_violations)
		port->qkey_violations = 0;
	if (pi->clientrereg_resv_subnetto & 0x80)
		*events |= BIT(IB_EVENT_CLIENT_REREGISTER);

	if (want == SOFTIB_PORT_DOWN)
		/* the link retrains at once: the cable is still there */
		port->state = port->peer ? SOFTIB_PORT_INIT : SOFTIB_PORT_DOWN;
	else if (want != SOFTIB_PORT_NOP)
		port->state = want;
	if (old == SOFTIB_PORT_ACTIVE && port->state != SOFTIB_PORT_ACTIVE)
		*events |= BIT(IB_EVENT_PORT_ERR);
	if (old != SOFTIB_PORT_ACTIVE && port->state == SOFTIB_PORT_ACTIVE)
		*events |= BIT(IB_EVENT_PORT_ACTIVE);
	return 0;
}

static void softib_get_node_info(struct softib_dev *sdev, u8 *data)
{
	struct ib_node_info *ni = (struct ib_node_info *)data;

	memset(data, 0, IB_SMP_DATA_SIZE);
	ni->base_version = IB_MGMT_BASE_VERSION;
	ni->class_version = 1;
	ni->node_type = RDMA_NODE_IB_CA;
	ni->num_ports = 1;
	ni->sys_guid = sdev->ibdev.node_guid;
	ni->node_guid = sdev->ibdev.node_guid;
	ni->port_guid = sdev->port.guids[0];
	ni->partition_cap = cpu_to_be16(SOFTIB_PKEYS);
	ni->device_id = cpu_to_be16(SOFTIB_DEVICE_ID);
	ni->revision = cpu_to_be32(1);
	ni->local_port_num = 1;
}

/*
 * Get or Set of one attribute into smp->data (port->lock held): an MAD
 * status, 0 for success.
 */
static u16 softib_sma_attr(struct softib_dev *sdev, struct ib_smp *smp,
			   bool set, u32 *events)
{
	struct softib_port *port = &sdev->port;
	u32 mod = be32_to_cpu(smp->attr_mod);
	u16 block = mod & 0xffff;
	unsigned int i;

	switch (be16_to_cpu(smp->attr_id)) {
	case 0x0010:	/* NodeDescription */
		if (set)
			return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
		memset(smp->data, 0, IB_SMP_DATA_SIZE);
		memcpy(smp->data, sdev->ibdev.node_desc,
		       min(sizeof(sdev->ibdev.node_desc),
			   (size_t)IB_SMP_DATA_SIZE));
		return 0;
	case 0x0011:	/* NodeInfo */
		if (set)
			return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
		softib_get_node_info(sdev, smp->data);
		return 0;
	case 0x0014:	/* GUIDInfo */
		if (block >= SOFTIB_GUIDS / SOFTIB_BLOCK_GUIDS)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		if (set) {
			const __be64 *g = (const __be64 *)smp->data;
			bool changed = false;

			/* entry 0 is the port GUID: read-only */
			for (i = 1; i < SOFTIB_BLOCK_GUIDS; i++) {
				changed |= port->guids[i] != g[i];
				port->guids[i] = g[i];
			}
			if (changed)
				*events |= BIT(IB_EVENT_GID_CHANGE);
		}
		memcpy(smp->data, port->guids, sizeof(port->guids));
		return 0;
	case 0x0015:	/* PortInfo: a CA ignores the modifier */
		if (set && softib_set_port_info(port, smp->data, events))
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		softib_get_port_info(port, smp->data);
		return 0;
	case 0x0016: {	/* P_KeyTable */
		__be16 *p = (__be16 *)smp->data;
		u16 *t;

		if (block >= SOFTIB_PKEYS / SOFTIB_BLOCK_PKEYS)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		t = &port->pkeys[block * SOFTIB_BLOCK_PKEYS];
		for (i = 0; i < SOFTIB_BLOCK_PKEYS; i++) {
			if (set && t[i] != be16_to_cpu(p[i])) {
				t[i] = be16_to_cpu(p[i]);
				*events |= BIT(IB_EVENT_PKEY_CHANGE);
			}
			p[i] = cpu_to_be16(t[i]);
		}
		return 0;
	}
	case 0x0017:	/* SLtoVLMappingTable */
		if (set)
			memcpy(port->sl2vl, smp->data, sizeof(port->sl2vl));
		memset(smp->data, 0, IB_SMP_DATA_SIZE);
		memcpy(smp->data, port->sl2vl, sizeof(port->sl2vl));
		return 0;
	case 0x0018:	/* VLArbitrationTable: modifier 1..4 is the part */
		i = mod >> 16;
		if (i < 1 || i > 4)
			return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
		if (set)
			memcpy(port->vlarb[i - 1], smp->data, 64);
		memcpy(smp->data, port->vlarb[i - 1], 64);
		return 0;
	}
	return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
}

static bool softib_sma_knows(__be16 attr)
{
	switch (be16_to_cpu(attr)) {
	case 0x0010: case 0x0011: case 0x0014: case 0x0015:
	case 0x0016: case 0x0017: case 0x0018:
		return true;
	}
	return false;
}

int softib_process_mad(struct ib_device *ibdev, int mad_flags, u32 port_num,
		       const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		       const struct ib_mad *in, struct ib_mad *out,
		       size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	struct softib_dev *sdev = to_sdev(ibdev);
	struct softib_port *port = &sdev->port;
	const struct ib_mad_hdr *hdr = &in->mad_hdr;
	struct ib_smp *smp = (struct ib_smp *)out;
	unsigned long flags;
	u32 events = 0;
	u16 status;

	/* not an SMP: for the GSI agents (the SA client, CM, umad) */
	if (hdr->mgmt_class != IB_MGMT_CLASS_SUBN_LID_ROUTED &&
	    hdr->mgmt_class != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return IB_MAD_RESULT_SUCCESS;
	/* we send no traps: nothing to repress */
	if (hdr->method == IB_MGMT_METHOD_TRAP_REPRESS)
		return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED;
	/*
	 * Responses, traps and attributes we do not serve (SMInfo above
	 * all) go to an agent, opensm's if it runs on this port; ib_mad
	 * answers "unsupported" where none is registered.
	 */
	if ((hdr->method != IB_MGMT_METHOD_GET &&
	     hdr->method != IB_MGMT_METHOD_SET) ||
	    (hdr->base_version == IB_MGMT_BASE_VERSION &&
	     hdr->class_version == 1 && !softib_sma_knows(hdr->attr_id)))
		return IB_MAD_RESULT_SUCCESS;

	memcpy(out, in, sizeof(*out));
	if (hdr->base_version != IB_MGMT_BASE_VERSION ||
	    hdr->class_version != 1) {
		status = IB_MGMT_MAD_STATUS_BAD_VERSION;
	} else {
		spin_lock_irqsave(&port->lock, flags);
		status = softib_sma_attr(sdev, smp,
					 hdr->method == IB_MGMT_METHOD_SET,
					 &events);
		spin_unlock_irqrestore(&port->lock, flags);
	}
	if (status)
		atomic64_inc(&port->stats.bad_mad);
	smp->method = IB_MGMT_METHOD_GET_RESP;
	smp->status = cpu_to_be16(status);
	if (hdr->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		smp->status |= IB_SMP_DIRECTION;
	while (events) {
		unsigned int e = __ffs(events);

		events &= ~BIT(e);
		softib_port_event(sdev, e);
	}
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
