// SPDX-License-Identifier: GPL-2.0
/*
 * Works that need RTNL: the reset, announce and multicast works of each
 * interface. They take RTNL (no trylock-and-requeue polling), so nothing
 * under RTNL may wait for them: ndo_stop and ndo_uninit cancel them
 * without waiting. Instead, a queued or running work holds a reference on
 * its netdev, which unregistration waits for (outside RTNL) before the
 * interface's verbs objects go (ipoib_main.c's priv_destructor); a work
 * that gets RTNL after the interface began to unregister does nothing.
 * Module unload waits for the last of them in ipoib_rtnl_exit().
 */
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "ipoib.h"

static struct workqueue_struct *ipoib_rtnl_wq;

/*
 * Run @dw in @delay jiffies (on @cpu, or WORK_CPU_UNBOUND), or sooner if
 * a run is already due sooner: a retry timer must never postpone a run
 * that an event asked for. (Racing callers may move it either way: only
 * the timing, never the references.)
 */
void ipoib_rtnl_work_queue_on(struct ipoib_dev *priv, struct delayed_work *dw,
			      unsigned long delay, int cpu)
{
	if (delayed_work_pending(dw) &&
	    !time_after(READ_ONCE(dw->timer.expires), jiffies + delay))
		return;
	dev_hold(priv->dev);
	/* it was pending: that run holds its reference already */
	if (mod_delayed_work_on(cpu, ipoib_rtnl_wq, dw, delay))
		dev_put(priv->dev);
}

void ipoib_rtnl_work_queue(struct ipoib_dev *priv, struct delayed_work *dw,
			   unsigned long delay)
{
	ipoib_rtnl_work_queue_on(priv, dw, delay, WORK_CPU_UNBOUND);
}

/* Any context; a run already under way goes on (and sees the state). */
void ipoib_rtnl_work_cancel(struct ipoib_dev *priv, struct delayed_work *dw)
{
	if (cancel_delayed_work(dw))
		dev_put(priv->dev);
}

/*
 * A work's start: true with RTNL held, or false (nothing held, the work's
 * reference dropped) once the interface has begun to unregister.
 */
bool ipoib_rtnl_work_begin(struct ipoib_dev *priv)
{
	rtnl_lock();
	if (READ_ONCE(priv->dev->reg_state) == NETREG_REGISTERED)
		return true;
	ipoib_rtnl_work_end(priv);
	return false;
}

void ipoib_rtnl_work_end(struct ipoib_dev *priv)
{
	rtnl_unlock();
	ipoib_rtnl_work_put(priv);
}

/*
 * The end of a work on this queue that takes no RTNL of its own (but may
 * call into the core, which takes it): its netdev reference goes.
 */
void ipoib_rtnl_work_put(struct ipoib_dev *priv)
{
	/* the last reference may let unregistration free priv */
	dev_put(priv->dev);
}

int ipoib_rtnl_init(void)
{
	ipoib_rtnl_wq = alloc_workqueue("ib_ipoib_rtnl", 0, 0);
	return ipoib_rtnl_wq ? 0 : -ENOMEM;
}

/* After every interface is gone: the last work has returned. */
void ipoib_rtnl_exit(void)
{
	destroy_workqueue(ipoib_rtnl_wq);
}
