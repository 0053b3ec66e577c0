// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only hooks, built with `make TEST_HOOKS=1` for the race selftests
 * and never into the module users load. Writing an interface name to
 * test_restart restarts its datapath (the reset work's path, otherwise
 * reached only through a transmit timeout, a QP error or a P_Key change)
 * while a transmit holds for test_xmit_hold_ms between its look at the
 * QP state and its post, and the restart holds for test_restart_gap_ms
 * between teardown and bring-up: a restart that does not wait for
 * transmit frees the rings under that send. test_cm_rx_stall makes the
 * receive side of connected mode stop reposting its buffers, as a peer
 * that stops taking data does (its senders meet RNR NAKs).
 * test_gid0_hold keeps a reference on an interface's GID 0 table entry
 * for test_gid0_hold_ms, as another user of the port (an address handle
 * not yet destroyed) may: a new default GID then finds its slot taken.
 * test_cm_gid_delay_ms holds every connection's set-up (our REQ's work
 * after it took GID 0, a REQ's handler) before it joins the channel list:
 * GID 0 can go meanwhile.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/string.h>
#include <linux/delay.h>
#include <linux/cpumask.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"

/* 1: the next transmit holds; 2: it holds now, on hold_cpu */
static atomic_t ipoib_test_hold = ATOMIC_INIT(0);
static int ipoib_test_hold_cpu;
/* teardowns that began while a transmit held: the race was on */
static atomic_t ipoib_test_overlaps = ATOMIC_INIT(0);

unsigned int ipoib_test_xmit_hold_ms;
module_param_named(test_xmit_hold_ms, ipoib_test_xmit_hold_ms, uint, 0644);
MODULE_PARM_DESC(test_xmit_hold_ms, "Test builds: after test_restart, the next transmit holds this long before its post");

unsigned int ipoib_test_restart_gap_ms;
module_param_named(test_restart_gap_ms, ipoib_test_restart_gap_ms, uint, 0644);
MODULE_PARM_DESC(test_restart_gap_ms, "Test builds: milliseconds between a restart's teardown and its bring-up");

unsigned int ipoib_test_cm_gid_delay_ms;
module_param_named(test_cm_gid_delay_ms, ipoib_test_cm_gid_delay_ms, uint, 0644);
MODULE_PARM_DESC(test_cm_gid_delay_ms, "Test builds: milliseconds a connection's set-up holds GID 0 before it joins the channel list");

unsigned int ipoib_test_path_delay_ms;
module_param_named(test_path_delay_ms, ipoib_test_path_delay_ms, uint, 0644);
MODULE_PARM_DESC(test_path_delay_ms, "Test builds: milliseconds a path's resolution waits before it starts");

void ipoib_test_xmit_delay(void)
{
	if (atomic_read(&ipoib_test_hold) != 1)
		return;
	WRITE_ONCE(ipoib_test_hold_cpu, raw_smp_processor_id());
	if (atomic_cmpxchg(&ipoib_test_hold, 1, 2) != 1)
		return;
	mdelay(READ_ONCE(ipoib_test_xmit_hold_ms));
	atomic_set(&ipoib_test_hold, 0);
}

void ipoib_test_teardown(void)
{
	if (atomic_read(&ipoib_test_hold) == 2)
		atomic_inc(&ipoib_test_overlaps);
}

static int ipoib_test_overlaps_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&ipoib_test_overlaps));
}

static const struct kernel_param_ops ipoib_test_overlaps_ops = {
	.get = ipoib_test_overlaps_get,
};
module_param_cb(test_xmit_overlaps, &ipoib_test_overlaps_ops, NULL, 0444);
MODULE_PARM_DESC(test_xmit_overlaps, "Test builds: datapath teardowns that began while a held transmit was between its look at the QP and its post");

/*
 * Arm the hold and wait (1 s at most) for a transmit to take it, then
 * restart on another CPU: on the held one the reset work would only run
 * once the send is done.
 */
static void ipoib_test_restart(struct ipoib_dev *priv)
{
	int cpu = WORK_CPU_UNBOUND, i;

	if (READ_ONCE(ipoib_test_xmit_hold_ms)) {
		atomic_set(&ipoib_test_hold, 1);
		for (i = 0; i < 1000 && atomic_read(&ipoib_test_hold) != 2; i++)
			usleep_range(1000, 2000);
		if (atomic_read(&ipoib_test_hold) == 2)
			cpu = cpumask_any_but(cpu_online_mask,
					      READ_ONCE(ipoib_test_hold_cpu));
		if (cpu >= nr_cpu_ids)
			cpu = WORK_CPU_UNBOUND;
	}
	set_bit(IPOIB_FLAG_RESTART, &priv->flags);
	ipoib_rtnl_work_queue_on(priv, &priv->reset_work, 0, cpu);
}

/* The interface a parameter names, held; or why not */
static struct net_device *ipoib_test_dev_get(const char *val)
{
	char name[IFNAMSIZ];
	struct net_device *dev;

	strscpy(name, val, sizeof(name));
	strim(name);
	dev = dev_get_by_name(&init_net, name);
	if (!dev)
		return ERR_PTR(-ENODEV);
	if (!ipoib_is_ipoib(dev)) {
		dev_put(dev);
		return ERR_PTR(-EINVAL);
	}
	return dev;
}

static int ipoib_test_restart_set(const char *val,
				  const struct kernel_param *kp)
{
	struct net_device *dev = ipoib_test_dev_get(val);

	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ipoib_test_restart(ipoib_priv(dev));
	dev_put(dev);
	return 0;
}

static const struct kernel_param_ops ipoib_test_restart_ops = {
	.set = ipoib_test_restart_set,
};
module_param_cb(test_restart, &ipoib_test_restart_ops, NULL, 0200);
MODULE_PARM_DESC(test_restart, "Test builds: write an interface name to restart its datapath under a held transmit");

/* ifindex (init_net) of the interface whose CM receives are not reposted */
int ipoib_test_stalled_ifindex;

static int ipoib_test_rx_stall_set(const char *val,
				   const struct kernel_param *kp)
{
	char name[IFNAMSIZ];
	struct net_device *dev;

	strscpy(name, val, sizeof(name));
	strim(name);
	if (!*name) {
		WRITE_ONCE(ipoib_test_stalled_ifindex, 0);
		return 0;
	}
	dev = dev_get_by_name(&init_net, name);
	if (!dev)
		return -ENODEV;
	WRITE_ONCE(ipoib_test_stalled_ifindex, dev->ifindex);
	dev_put(dev);
	return 0;
}

static const struct kernel_param_ops ipoib_test_rx_stall_ops = {
	.set = ipoib_test_rx_stall_set,
};
module_param_cb(test_cm_rx_stall, &ipoib_test_rx_stall_ops, NULL, 0200);
MODULE_PARM_DESC(test_cm_rx_stall, "Test builds: write an interface name: its connected mode stops reposting receive buffers (empty: none)");

atomic_t ipoib_test_rx_nopage = ATOMIC_INIT(0);

static int ipoib_test_rx_nopage_set(const char *val,
				    const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	atomic_set(&ipoib_test_rx_nopage, min_t(unsigned int, n, INT_MAX));
	return 0;
}

static int ipoib_test_rx_nopage_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&ipoib_test_rx_nopage));
}

static const struct kernel_param_ops ipoib_test_rx_nopage_ops = {
	.set = ipoib_test_rx_nopage_set,
	.get = ipoib_test_rx_nopage_get,
};
module_param_cb(test_rx_nopage, &ipoib_test_rx_nopage_ops, NULL, 0644);
MODULE_PARM_DESC(test_rx_nopage, "Test builds: the next N receive refills (NAPI) find no page, as if memory ran out; reads what is left");

/* the held GID 0 entry (test_gid0_lock) and the work that lets it go */
static const struct ib_gid_attr *ipoib_test_gid0;
static DEFINE_MUTEX(ipoib_test_gid0_lock);

static unsigned int ipoib_test_gid0_hold_ms = 1000;
module_param_named(test_gid0_hold_ms, ipoib_test_gid0_hold_ms, uint, 0644);
MODULE_PARM_DESC(test_gid0_hold_ms, "Test builds: how long test_gid0_hold holds GID 0's entry");

static void ipoib_test_gid0_put(struct work_struct *work)
{
	mutex_lock(&ipoib_test_gid0_lock);
	if (ipoib_test_gid0)
		rdma_put_gid_attr(ipoib_test_gid0);
	ipoib_test_gid0 = NULL;
	mutex_unlock(&ipoib_test_gid0_lock);
}

static DECLARE_DELAYED_WORK(ipoib_test_gid0_work, ipoib_test_gid0_put);

static int ipoib_test_gid0_hold_set(const char *val,
				    const struct kernel_param *kp)
{
	struct net_device *dev = ipoib_test_dev_get(val);
	const struct ib_gid_attr *attr;
	struct ipoib_dev *priv;
	int ret = 0;

	if (IS_ERR(dev))
		return PTR_ERR(dev);
	priv = ipoib_priv(dev);
	mutex_lock(&ipoib_test_gid0_lock);
	if (ipoib_test_gid0) {
		ret = -EBUSY;
	} else {
		attr = rdma_get_gid_attr(priv->ca, priv->port, 0);
		if (IS_ERR(attr)) {
			ret = PTR_ERR(attr);
		} else {
			ipoib_test_gid0 = attr;
			schedule_delayed_work(&ipoib_test_gid0_work,
					      msecs_to_jiffies(READ_ONCE(ipoib_test_gid0_hold_ms)));
		}
	}
	mutex_unlock(&ipoib_test_gid0_lock);
	dev_put(dev);
	return ret;
}

static const struct kernel_param_ops ipoib_test_gid0_hold_ops = {
	.set = ipoib_test_gid0_hold_set,
};
module_param_cb(test_gid0_hold, &ipoib_test_gid0_hold_ops, NULL, 0200);
MODULE_PARM_DESC(test_gid0_hold, "Test builds: write an interface name to hold its GID 0 entry for test_gid0_hold_ms");

/* Module unload: nothing held, nothing queued. */
void ipoib_test_exit(void)
{
	cancel_delayed_work_sync(&ipoib_test_gid0_work);
	ipoib_test_gid0_put(NULL);
}
