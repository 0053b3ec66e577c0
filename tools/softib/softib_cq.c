// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues: a ring of work completions. The completion handler
 * never runs in the caller of post_send or in the middle of a delivery:
 * an armed CQ queues notify_work, which calls it with bottom halves off
 * (ULPs schedule NAPI from it).
 */
#include <linux/slab.h>
#include <linux/log2.h>
#include "softib.h"
#include "ipoib_compat.h"	/* linked in from the top */

static void softib_cq_notify(struct work_struct *work)
{
	struct softib_cq *cq = container_of(work, struct softib_cq,
					    notify_work);

	if (cq->ibcq.comp_handler) {
		local_bh_disable();
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		local_bh_enable();
	}
}

/* Add a completion: 0, or -ENOSPC (counted, CQ_ERR raised) if full. */
int softib_cq_push(struct softib_cq *cq, const struct ib_wc *wc)
{
	struct softib_dev *sdev = to_sdev(cq->ibcq.device);
	unsigned long flags;
	bool notify = false;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->head - cq->tail >= cq->ibcq.cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		atomic64_inc(&sdev->port.stats.cq_overflow);
		if (cq->ibcq.event_handler) {
			struct ib_event ev = {
				.device = cq->ibcq.device,
				.element.cq = &cq->ibcq,
				.event = IB_EVENT_CQ_ERR,
			};

			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		return -ENOSPC;
	}
	cq->ring[cq->head & (cq->size - 1)] = *wc;
	cq->head++;
	/* solicited-only arming wakes on any completion: allowed, simpler */
	if (cq->armed && !cq->dying) {
		cq->armed = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (notify)
		queue_work(system_highpri_wq, &cq->notify_work);
	return 0;
}

static int softib_create_cq(struct ib_cq *ibcq,
			    const struct ib_cq_init_attr *attr,
			    IPOIB_CREATE_CQ_LAST_ARG)
{
	struct softib_cq *cq = to_scq(ibcq);

	if (attr->flags || !attr->cqe || attr->cqe > SOFTIB_MAX_CQE)
		return -EINVAL;
	cq->size = roundup_pow_of_two(attr->cqe);
	cq->ring = kvcalloc(cq->size, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring)
		return -ENOMEM;
	ibcq->cqe = attr->cqe;
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->notify_work, softib_cq_notify);
	return 0;
}

/*
 * ib_free_cq() cancels its own work before destroy_cq: no notify may
 * queue that work again after it (ib_mad's CQs).
 */
static int softib_pre_destroy_cq(struct ib_cq *ibcq)
{
	struct softib_cq *cq = to_scq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->dying = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	cancel_work_sync(&cq->notify_work);
	return 0;
}

static int softib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct softib_cq *cq = to_scq(ibcq);

	softib_pre_destroy_cq(ibcq);
	kvfree(cq->ring);
	return 0;
}

static int softib_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct softib_cq *cq = to_scq(ibcq);
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < n && cq->tail != cq->head; i++, cq->tail++)
		wc[i] = cq->ring[cq->tail & (cq->size - 1)];
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}

static int softib_req_notify_cq(struct ib_cq *ibcq,
				enum ib_cq_notify_flags flags)
{
	struct softib_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	cq->armed = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->head != cq->tail)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

const struct ib_device_ops softib_cq_ops = {
	.create_cq = softib_create_cq,
	.pre_destroy_cq = softib_pre_destroy_cq,
	.destroy_cq = softib_destroy_cq,
	.poll_cq = softib_poll_cq,
	.req_notify_cq = softib_req_notify_cq,
};
