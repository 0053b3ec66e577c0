/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IPoIB wire formats: RFC 4391 (UD), RFC 4755 (CM) and
 * draft-ietf-ipoib-link-multicast-04. Pure functions over byte buffers,
 * shared by the kernel module and the userspace unit tests and fuzzers,
 * so this file may include nothing but fixed-width types.
 */
#ifndef IPOIB_WIRE_H
#define IPOIB_WIRE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
/* the kernel's own definitions (asm-generic/int-ll64.h) */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
#endif

/* RFC 4391 section 6: the 4-octet encapsulation header */
#define IPOIB_ENCAP_LEN		4
#define IPOIB_TYPE_IPV4		0x0800
#define IPOIB_TYPE_ARP		0x0806
#define IPOIB_TYPE_RARP		0x8035
#define IPOIB_TYPE_IPV6		0x86dd

/* RFC 4391 section 9.1.1 / RFC 4755 section 3.1: the link-layer address */
#define IPOIB_ADDR_LEN		20
#define IPOIB_GID_LEN		16
#define IPOIB_FLAG_RC		0x80
#define IPOIB_FLAG_UC		0x40
#define IPOIB_FLAGS_MASK	(IPOIB_FLAG_RC | IPOIB_FLAG_UC)
#define IPOIB_QPN_MASK		0xffffffu
#define IPOIB_MCAST_QPN		0xffffffu

/* RFC 4391 section 4: MGID layout */
#define IPOIB_SIG_IPV4		0x401b
#define IPOIB_SIG_IPV6		0x601b
#define IPOIB_SCOPE_LINK	0x2	/* RECOMMENDED default, section 4.1 */
#define IPOIB_PKEY_FULL		0x8000
#define IPOIB_DEFAULT_QKEY	0x0b1b

/* RFC 4755 section 6: CM private data */
#define IPOIB_CM_PDATA_LEN	8
/*
 * Our extension after the RFC's 8 octets: a magic word, then capability
 * bits. CM zero-pads private data, so a peer that sends only the RFC's
 * octets (the in-tree driver) reads as "no capabilities".
 */
#define IPOIB_CM_PDATA_EXT_LEN	16
#define IPOIB_CM_EXT_MAGIC	0x49504f43u	/* "IPOC" */
/* sender also transmits on connections its peer opened (RFC 4755 s3.3) */
#define IPOIB_CM_CAP_BIDIR	0x1u
/* sender accepts checksum-pending packets (below) on this connection */
#define IPOIB_CM_CAP_CSUM	0x2u

/*
 * Checksum-pending packets: towards a peer that advertised
 * IPOIB_CM_CAP_CSUM, a packet whose TCP/UDP checksum the stack left to the
 * device goes as SEND with Immediate, the immediate data saying where the
 * checksum starts and where its field lies (octets from the start of the
 * IP packet, then from that start), as virtio-net's NEEDS_CSUM does. The
 * RC transport's end-to-end ICRC already protects the octets, so neither
 * side computes the checksum; the receiver hands the packet up as one
 * whose checksum is still to be filled in (it completes it if forwarded).
 * The encapsulation header is untouched: RFC 4391 s6 keeps its Reserved
 * field zero. The field must end within the first IPOIB_CM_CSUM_MAX_END
 * octets of the packet.
 */
#define IPOIB_CM_CSUM_MAX_END	256
#define IPOIB_CM_CSUM_MIN_START	20	/* the smallest IP header */

/* RFC 4755 section 3.5 service IDs: the RFC's and the Linux/OFED form */
#define IPOIB_SID_RFC_BASE	0x0100000000000000ull
#define IPOIB_SID_LINUX_BASE	0x1000000000000000ull

struct ipoib_lladdr {
	u8 flags;		/* IPOIB_FLAG_RC / IPOIB_FLAG_UC */
	u32 qpn;		/* 24 bits */
	u8 gid[IPOIB_GID_LEN];
};

struct ipoib_cm_pdata {
	u32 qpn;		/* sender's UD QPN, 24 bits */
	u32 mtu;		/* sender's receive MTU */
	u32 caps;		/* IPOIB_CM_CAP_*, 0 if the extension is absent */
};

/* Encapsulation header. Reserved is written zero and ignored on parse. */
void ipoib_encap_pack(u8 *buf, u16 type);
int ipoib_encap_parse(const u8 *buf, size_t len, u16 *type);
bool ipoib_type_known(u16 type);

/* Link-layer address. Parse masks reserved flag bits and keeps RC/UC. */
void ipoib_lladdr_pack(u8 *buf, const struct ipoib_lladdr *a);
int ipoib_lladdr_parse(const u8 *buf, size_t len, struct ipoib_lladdr *a);
int ipoib_lladdr_cmp(const u8 *a, const u8 *b);

/* P_Key and scope */
u16 ipoib_pkey_full(u16 pkey);
bool ipoib_pkey_valid(u16 pkey);

/* MGIDs */
void ipoib_mgid_broadcast(u8 *mgid, u8 scope, u16 pkey);
void ipoib_mgid_ipv4(u8 *mgid, u8 scope, u16 pkey, const u8 *group);
void ipoib_mgid_ipv6(u8 *mgid, u8 scope, u16 pkey, const u8 *group);
void ipoib_bcast_lladdr(u8 *buf, u8 scope, u16 pkey);
int ipoib_mgid_parse(const u8 *mgid, u8 *scope, u16 *sig, u16 *pkey);

/* CM private data (pack writes IPOIB_CM_PDATA_EXT_LEN octets) and service IDs */
void ipoib_cm_pdata_pack(u8 *buf, const struct ipoib_cm_pdata *pd);
int ipoib_cm_pdata_parse(const u8 *buf, size_t len, struct ipoib_cm_pdata *pd);
/* Immediate data of a checksum-pending packet (4 octets) */
int ipoib_cm_csum_imm_pack(u8 *buf, u32 start, u32 offset);
int ipoib_cm_csum_imm_parse(const u8 *buf, size_t ip_len, u16 *start,
			    u16 *offset);
u64 ipoib_sid_rfc(u32 qpn);
u64 ipoib_sid_linux(u32 qpn);
int ipoib_sid_qpn(u64 sid, u32 *qpn);

/*
 * Subnet administration event subscriptions (IBA vol. 1 s13.4.8 and
 * s15.2.5.12): the InformInfo a subscriber sets, the Notice a Report
 * carries. RFC 4391 s10 asks senders to follow MCG create and delete.
 */
#define IPOIB_SA_INFORM_LEN	36
#define IPOIB_SA_NOTICE_LEN	80
#define IPOIB_TRAP_MCG_CREATED	66
#define IPOIB_TRAP_MCG_DELETED	67

void ipoib_sa_inform_pack(u8 *buf, u16 trap, bool subscribe, u32 qpn);

/* MCMemberRecord (IBA vol. 1 s15.2.5.17): a GetTable of a partition's groups */
#define IPOIB_SA_MCMEMBER_LEN	52
void ipoib_sa_mcmember_query_pack(u8 *buf, u16 pkey);
size_t ipoib_sa_table_count(size_t data_len, u16 attr_offset);
int ipoib_sa_notice_parse(const u8 *buf, size_t len, u16 *trap, u8 *gid);

#endif /* IPOIB_WIRE_H */
