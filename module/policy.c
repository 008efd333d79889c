// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which HugeTLB memfds keep poisoned memory mapped, and what each holds.
 *
 * A kept memfd pins the module (unload is refused while one exists) from
 * memfd_create() until its inode is evicted.  Lock order: mf_mutex, then
 * the folio lock, then mfr_memfds_lock.
 */
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <uapi/linux/memfd.h>

#include "policy.h"
#include "stats.h"

struct mfr_memfd {
	struct list_head node;
	struct address_space *mapping;
	unsigned long ino;
};

static LIST_HEAD(mfr_memfds);
static DEFINE_MUTEX(mfr_memfds_lock);

static struct mfr_memfd *mfr_memfd_find(struct address_space *mapping)
{
	struct mfr_memfd *m;

	lockdep_assert_held(&mfr_memfds_lock);
	list_for_each_entry(m, &mfr_memfds, node)
		if (m->mapping == mapping)
			return m;
	return NULL;
}

int mfr_policy_memfd_created(struct file *file, unsigned int flags)
{
	struct mfr_memfd *m;

	if (!(flags & MFD_MF_KEEP_UE_MAPPED))
		return 0;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->mapping = file->f_mapping;
	m->ino = file_inode(file)->i_ino;

	mutex_lock(&mfr_memfds_lock);
	list_add(&m->node, &mfr_memfds);
	mutex_unlock(&mfr_memfds_lock);

	/* Called through the hooks, which hold a reference already. */
	__module_get(THIS_MODULE);
	mapping_set_mf_keep_ue_mapped(file->f_mapping);
	atomic_long_inc(&mfr_stats.memfds_kept);
	return 0;
}

void mfr_policy_mapping_evicted(struct address_space *mapping)
{
	struct mfr_memfd *m;

	mutex_lock(&mfr_memfds_lock);
	m = mfr_memfd_find(mapping);
	if (m)
		list_del(&m->node);
	mutex_unlock(&mfr_memfds_lock);
	if (WARN_ON_ONCE(!m))
		return;

	/* Its poisoned pages leave raw_pages_kept when their folio is offlined. */
	atomic_long_dec(&mfr_stats.memfds_kept);
	kfree(m);
	module_put(THIS_MODULE);
}

void mfr_policy_page_poisoned(struct folio *folio, struct page *page)
{
	struct address_space *mapping = folio_mapping(folio);
	struct mfr_memfd *m;
	unsigned long ino = 0;

	mutex_lock(&mfr_memfds_lock);
	m = mfr_memfd_find(mapping);
	if (m)
		ino = m->ino;
	mutex_unlock(&mfr_memfds_lock);
	if (WARN_ON_ONCE(!m))
		return;

	atomic_long_inc(&mfr_stats.raw_pages_kept);
	pr_info_ratelimited("memfd inode %lu: pfn %#lx poisoned, its %lu KiB page stays mapped\n",
			    ino, page_to_pfn(page), folio_size(folio) >> 10);
}
