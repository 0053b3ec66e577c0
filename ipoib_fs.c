// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/ipoib/ibX_mcg (multicast groups) and
 * ibX_path (paths), the views users know from the in-tree driver, and
 * ibX_cm (connections). Interfaces outside the initial network namespace
 * are ibX@nsINUM_*.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "ipoib.h"

static struct dentry *ipoib_root;

static int ipoib_mcg_show(struct seq_file *m, void *v)
{
	ipoib_fs_show_mcg(m->private, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ipoib_mcg);

static int ipoib_path_show(struct seq_file *m, void *v)
{
	ipoib_fs_show_path(m->private, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ipoib_path);

static int ipoib_cm_conns_show(struct seq_file *m, void *v)
{
	ipoib_cm_show(m->private, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ipoib_cm_conns);

/*
 * The in-tree names in the initial namespace; elsewhere names may repeat,
 * so the namespace's inode number (as in /proc/PID/ns/net) joins them.
 */
static struct dentry *ipoib_fs_file(struct ipoib_dev *priv, const char *what,
				    const struct file_operations *fops)
{
	struct net *net = dev_net(priv->dev);
	char name[IFNAMSIZ + 24];

	if (net_eq(net, &init_net))
		snprintf(name, sizeof(name), "%s_%s", priv->dev->name, what);
	else
		snprintf(name, sizeof(name), "%s@ns%u_%s", priv->dev->name,
			 net->ns.inum, what);
	return debugfs_create_file(name, 0400, ipoib_root, priv, fops);
}

void ipoib_fs_add(struct ipoib_dev *priv)
{
	priv->debugfs_mcg = ipoib_fs_file(priv, "mcg", &ipoib_mcg_fops);
	priv->debugfs_path = ipoib_fs_file(priv, "path", &ipoib_path_fops);
	priv->debugfs_cm = ipoib_fs_file(priv, "cm", &ipoib_cm_conns_fops);
}

void ipoib_fs_del(struct ipoib_dev *priv)
{
	debugfs_remove(priv->debugfs_mcg);
	debugfs_remove(priv->debugfs_path);
	debugfs_remove(priv->debugfs_cm);
	priv->debugfs_cm = NULL;
	priv->debugfs_mcg = NULL;
	priv->debugfs_path = NULL;
}

/* The files carry the interface name: follow a rename (under RTNL). */
void ipoib_fs_rename(struct ipoib_dev *priv)
{
	ipoib_fs_del(priv);
	ipoib_fs_add(priv);
}

void ipoib_fs_init(void)
{
	ipoib_root = debugfs_create_dir("ipoib", NULL);
}

void ipoib_fs_exit(void)
{
	debugfs_remove(ipoib_root);
}
