// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: /sys/kernel/debug/ipoib/ibX_mcg (multicast groups) and
 * ibX_path (paths), the views users know from the in-tree driver.
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

void ipoib_fs_add(struct ipoib_dev *priv)
{
	char name[IFNAMSIZ + 8];

	snprintf(name, sizeof(name), "%s_mcg", priv->dev->name);
	priv->debugfs_mcg = debugfs_create_file(name, 0400, ipoib_root, priv,
						&ipoib_mcg_fops);
	snprintf(name, sizeof(name), "%s_path", priv->dev->name);
	priv->debugfs_path = debugfs_create_file(name, 0400, ipoib_root, priv,
						 &ipoib_path_fops);
	snprintf(name, sizeof(name), "%s_cm", priv->dev->name);
	priv->debugfs_cm = debugfs_create_file(name, 0400, ipoib_root, priv,
					       &ipoib_cm_conns_fops);
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
