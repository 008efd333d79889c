// SPDX-License-Identifier: GPL-2.0-only
/*
 * Which HugeTLB memfds keep poisoned memory mapped, and what each holds.
 *
 * A memfd is kept when created with MFD_MF_KEEP_UE_MAPPED, when a rule
 * says so, or when memfd-set says so later.  A kept memfd pins the module
 * (unload is refused while one exists) until its inode is evicted or it
 * is set back to the default policy.  Lock order: mf_mutex, then the
 * folio lock, then mfr_memfds_lock.
 *
 * Any user can create kept memfds, so what one costs is bounded: its
 * record is charged to the memory cgroup of the task that created it (of
 * the process holding it, for memfd-set), finding it is a hash lookup by
 * mapping (never a walk over every memfd), and its notifications count
 * against its creator's rate limit (ratelimit.c).
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/hugetlb.h>
#include <linux/memcontrol.h>
#include <linux/magic.h>
#include <linux/mfr.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/pagevec.h>
#include <linux/pid.h>
#include <linux/rhashtable.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <net/genetlink.h>
#include <uapi/linux/memfd.h>

#include "events.h"
#include "mfr-nl-gen.h"
#include "netlink.h"
#include "poison.h"
#include "policy.h"
#include "ratelimit.h"
#include "rules.h"
#include "stats.h"

/* memfd_create() names its files "memfd:" followed by the user's name. */
#define MFR_MEMFD_PREFIX	"memfd:"
#define MFR_MEMFD_NAME_LEN	(NAME_MAX - (sizeof(MFR_MEMFD_PREFIX) - 1) + 1)

struct mfr_memfd {
	struct rhash_head hnode;	/* in mfr_memfds_by_mapping */
	struct address_space *mapping;	/* its key */
	u32 id;				/* its index in mfr_memfds */
	kuid_t uid;			/* whose rate limit its events count on */
	unsigned long ino;
	char name[MFR_MEMFD_NAME_LEN];
	pid_t pid;
	char comm[TASK_COMM_LEN];
	u64 cgroup_id;
	char *cgroup_path;
	u64 hugepage_size;
	u32 rule_id;
	/* Protected by mfr_memfds_lock: */
	u32 budget;
	u32 nr_poisoned;
	u32 state;
};

/*
 * The records, twice: by mapping for the hooks' lookups, and by an id
 * given in creation order for dumps, which resume after the last id sent.
 * Both are changed, and every lookup is made, under mfr_memfds_lock, so
 * a record taken out under it can be freed at once.
 */
static const struct rhashtable_params mfr_memfd_params = {
	.head_offset = offsetof(struct mfr_memfd, hnode),
	.key_offset = offsetof(struct mfr_memfd, mapping),
	.key_len = sizeof(struct address_space *),
	.automatic_shrinking = true,
};

static struct rhashtable mfr_memfds_by_mapping;
static DEFINE_XARRAY_ALLOC1(mfr_memfds);
static u32 mfr_memfds_next_id;
static DEFINE_MUTEX(mfr_memfds_lock);
static struct kmem_cache *mfr_memfd_cache;

static struct mfr_memfd *mfr_memfd_find(struct address_space *mapping)
{
	lockdep_assert_held(&mfr_memfds_lock);
	return rhashtable_lookup_fast(&mfr_memfds_by_mapping, &mapping,
				      mfr_memfd_params);
}

int mfr_policy_init(void)
{
	int err;

	/* Accounted: created, and so paid for, by any user. */
	mfr_memfd_cache = KMEM_CACHE(mfr_memfd, SLAB_ACCOUNT);
	if (!mfr_memfd_cache)
		return -ENOMEM;
	err = rhashtable_init(&mfr_memfds_by_mapping, &mfr_memfd_params);
	if (err)
		kmem_cache_destroy(mfr_memfd_cache);
	return err;
}

/* At module exit: no kept memfd is left (each holds a module reference). */
void mfr_policy_exit(void)
{
	WARN_ON_ONCE(!xa_empty(&mfr_memfds));
	xa_destroy(&mfr_memfds);
	rhashtable_destroy(&mfr_memfds_by_mapping);
	kmem_cache_destroy(mfr_memfd_cache);
}

/*
 * Requests keep memfds only once the hooks are registered: a memfd kept
 * before would never hear of its eviction.  Under mfr_memfds_lock.
 */
static bool mfr_policy_live;

void mfr_policy_go_live(void)
{
	mutex_lock(&mfr_memfds_lock);
	mfr_policy_live = true;
	mutex_unlock(&mfr_memfds_lock);
}

static bool mfr_file_is_hugetlb(struct file *file)
{
	return file_inode(file)->i_sb->s_magic == HUGETLBFS_MAGIC;
}

/*
 * memfd_create() makes a pseudo file (no parent, never hashed) named
 * "memfd:" and the user's name; returns that name, or NULL for any other
 * file.
 */
static const char *mfr_memfd_name(struct file *file)
{
	struct dentry *dentry = file->f_path.dentry;
	const char *name = dentry->d_name.name;

	if (!IS_ROOT(dentry) || !d_unhashed(dentry) ||
	    strncmp(name, MFR_MEMFD_PREFIX, sizeof(MFR_MEMFD_PREFIX) - 1))
		return NULL;
	return name + sizeof(MFR_MEMFD_PREFIX) - 1;
}

static void mfr_memfd_free(struct mfr_memfd *m)
{
	kfree(m->cgroup_path);
	kmem_cache_free(mfr_memfd_cache, m);
}

/*
 * The path of @cgrp, in a string of its length charged like the record:
 * most paths fit the stack buffer, the rest get a page for a moment.
 */
static char *mfr_cgroup_path(struct cgroup *cgrp)
{
	char small[128], *buf, *path;

	if (cgroup_path(cgrp, small, sizeof(small)) >= 0)
		return kstrdup(small, GFP_KERNEL_ACCOUNT);
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return NULL;
	if (cgroup_path(cgrp, buf, PATH_MAX) < 0)
		strscpy(buf, "?", PATH_MAX);
	path = kstrdup(buf, GFP_KERNEL_ACCOUNT);
	kfree(buf);
	return path;
}

/*
 * A record of @file, owned by @tsk (real uid @uid) in cgroup @cgrp; not
 * yet listed.  Charged to the caller's memory cgroup, or to the one
 * set_active_memcg() made active.
 */
static struct mfr_memfd *mfr_memfd_new(struct file *file, const char *name,
				       struct task_struct *tsk, kuid_t uid,
				       struct cgroup *cgrp)
{
	struct mfr_memfd *m;

	m = kmem_cache_zalloc(mfr_memfd_cache, GFP_KERNEL_ACCOUNT);
	if (!m)
		return NULL;
	m->cgroup_path = mfr_cgroup_path(cgrp);
	if (!m->cgroup_path) {
		kmem_cache_free(mfr_memfd_cache, m);
		return NULL;
	}

	m->uid = uid;
	m->mapping = file->f_mapping;
	m->ino = file_inode(file)->i_ino;
	strscpy(m->name, name, sizeof(m->name));
	m->pid = task_tgid_nr(tsk);
	get_task_comm(m->comm, tsk);
	m->cgroup_id = cgroup_id(cgrp);
	m->hugepage_size = huge_page_size(hstate_file(file));
	m->state = MFR_MEMFD_STATE_CLEAN;
	return m;
}

/* The attributes of @m but its generation. */
static int mfr_memfd_fill(struct sk_buff *msg, const struct mfr_memfd *m)
{
	lockdep_assert_held(&mfr_memfds_lock);
	if (nla_put_uint(msg, MFR_A_MEMFD_INODE, m->ino) ||
	    nla_put_string(msg, MFR_A_MEMFD_NAME, m->name) ||
	    nla_put_u32(msg, MFR_A_MEMFD_PID, m->pid) ||
	    nla_put_string(msg, MFR_A_MEMFD_COMM, m->comm) ||
	    nla_put_uint(msg, MFR_A_MEMFD_CGROUP_ID, m->cgroup_id) ||
	    nla_put_string(msg, MFR_A_MEMFD_CGROUP_PATH, m->cgroup_path) ||
	    nla_put_uint(msg, MFR_A_MEMFD_SIZE, i_size_read(m->mapping->host)) ||
	    nla_put_uint(msg, MFR_A_MEMFD_HUGEPAGE_SIZE, m->hugepage_size) ||
	    nla_put_u32(msg, MFR_A_MEMFD_POLICY, MFR_POLICY_KEEP) ||
	    nla_put_u32(msg, MFR_A_MEMFD_BUDGET, m->budget) ||
	    nla_put_u32(msg, MFR_A_MEMFD_RAW_PAGES_POISONED, m->nr_poisoned) ||
	    nla_put_u32(msg, MFR_A_MEMFD_STATE, m->state) ||
	    (m->rule_id && nla_put_u32(msg, MFR_A_MEMFD_RULE_ID, m->rule_id)))
		return -EMSGSIZE;
	return 0;
}

/* A reply or dump entry about @m as of @generation. */
static int mfr_memfd_fill_reply(struct sk_buff *msg, const struct mfr_memfd *m,
				u64 generation)
{
	if (mfr_memfd_fill(msg, m) ||
	    nla_put_uint(msg, MFR_A_MEMFD_GENERATION, generation))
		return -EMSGSIZE;
	return 0;
}

/*
 * A change of state about @m: notify @cmd unless its creator is past its
 * rate limit.  Called under mfr_memfds_lock, @m still valid; returns the
 * generation of the change.
 */

static u64 mfr_memfd_event(u8 cmd, const struct mfr_memfd *m)
{
	struct sk_buff *msg = NULL;
	void *hdr = NULL;
	u64 generation;

	if (mfr_nl_has_listeners() && mfr_ratelimit_allow(m->uid))
		msg = mfr_ntf_new(cmd, GFP_KERNEL, &hdr);
	if (msg && mfr_memfd_fill(msg, m)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	generation = mfr_ntf_queue(msg, hdr, MFR_A_MEMFD_GENERATION);
	mfr_ntf_kick();
	return generation;
}

/*
 * List @m and mark its mapping; the caller holds a module reference.
 * The index nodes are charged like the record.  Sets @*generation, or
 * returns an errno (nothing listed) if the indexes could not take @m.
 */
static int mfr_memfd_keep(struct mfr_memfd *m, u64 *generation)
{
	int err;

	lockdep_assert_held(&mfr_memfds_lock);
	err = xa_alloc_cyclic(&mfr_memfds, &m->id, m, xa_limit_32b,
			      &mfr_memfds_next_id, GFP_KERNEL_ACCOUNT);
	if (err < 0)
		return err;
	err = rhashtable_insert_fast(&mfr_memfds_by_mapping, &m->hnode,
				     mfr_memfd_params);
	if (err) {
		xa_erase(&mfr_memfds, m->id);
		return err;
	}
	__module_get(THIS_MODULE);
	mapping_set_mf_keep_ue_mapped(m->mapping);
	atomic_long_inc(&mfr_stats.memfds_kept);
	*generation = mfr_memfd_event(MFR_CMD_MEMFD_KEPT_NTF, m);
	return 0;
}

/* Unlist @m; its poisoned pages leave raw_pages_kept when offlined. */
static u64 mfr_memfd_forget(struct mfr_memfd *m)
{
	lockdep_assert_held(&mfr_memfds_lock);
	rhashtable_remove_fast(&mfr_memfds_by_mapping, &m->hnode,
			       mfr_memfd_params);
	xa_erase(&mfr_memfds, m->id);
	atomic_long_dec(&mfr_stats.memfds_kept);
	return mfr_memfd_event(MFR_CMD_MEMFD_EVICTED_NTF, m);
}

int mfr_policy_memfd_created(struct file *file, unsigned int flags)
{
	struct mfr_rule_verdict verdict;
	struct mfr_memfd *m;
	struct cgroup *cgrp;
	const char *name;
	u64 generation;
	int err;

	name = mfr_memfd_name(file);
	if (WARN_ON_ONCE(!name))
		return 0;

	rcu_read_lock();
	cgrp = task_dfl_cgroup(current);
	cgroup_get(cgrp);
	rcu_read_unlock();

	verdict = mfr_rules_match(name, cgrp, current_uid());
	if (!(flags & MFD_MF_KEEP_UE_MAPPED) && !verdict.keep) {
		cgroup_put(cgrp);
		return 0;
	}

	m = mfr_memfd_new(file, name, current, current_uid(), cgrp);
	cgroup_put(cgrp);
	if (!m)
		return -ENOMEM;
	if (verdict.keep)
		m->budget = verdict.budget;
	/* Asked for explicitly, the memfd is not the rule's doing. */
	if (!(flags & MFD_MF_KEEP_UE_MAPPED))
		m->rule_id = verdict.rule_id;

	/*
	 * The kept memfd holds the module.  Once an unload has begun no
	 * reference is to be had (the hooks hold none, unregistering waits
	 * for this call): the memfd is then treated as without the module.
	 */
	if (!try_module_get(THIS_MODULE)) {
		mfr_memfd_free(m);
		return (flags & MFD_MF_KEEP_UE_MAPPED) ? -EOPNOTSUPP : 0;
	}
	mutex_lock(&mfr_memfds_lock);
	err = mfr_memfd_keep(m, &generation);
	mutex_unlock(&mfr_memfds_lock);
	module_put(THIS_MODULE);
	if (err)
		mfr_memfd_free(m);
	return err;
}

void mfr_policy_mapping_evicted(struct address_space *mapping)
{
	struct mfr_memfd *m;

	mutex_lock(&mfr_memfds_lock);
	m = mfr_memfd_find(mapping);
	if (m)
		mfr_memfd_forget(m);
	mutex_unlock(&mfr_memfds_lock);
	if (WARN_ON_ONCE(!m))
		return;
	mfr_memfd_free(m);
	module_put(THIS_MODULE);
}

static void mfr_budget_exceeded(struct folio *folio, struct page *page,
				const struct mfr_memfd *m)
{
	struct mfr_event ev = {
		.cmd = MFR_CMD_BUDGET_EXCEEDED_NTF,
		.pfn = page_to_pfn(page),
		.head_pfn = folio_pfn(folio),
		.folio_size = folio_size(folio),
		.ino = m->ino,
		.offset = ((u64)folio->index + folio_page_idx(folio, page)) <<
			  PAGE_SHIFT,
		.budget = m->budget,
	};
	unsigned long was_kept;

	atomic_long_inc(&mfr_stats.budget_fallbacks);
	/*
	 * A kept hugepage falls back whole: its pages are kept no more, and
	 * it is still offlined when released, so each page keeps a record.
	 * A hugepage whose first error is past the budget is never kept: the
	 * kernel handles it as stock does, and no record would ever end.
	 */
	if (folio_test_hugetlb_mfr_kept(folio)) {
		was_kept = mfr_poison_fall_back(folio_pfn(folio),
						folio_nr_pages(folio));
		atomic_long_sub(was_kept, &mfr_stats.raw_pages_kept);
		mfr_poison_add(folio, page, m->ino, MFR_PAGE_STATE_FALLBACK);
	}
	pr_info_ratelimited("memfd inode %lu: pfn %#llx poisoned past its budget of %u pages: hugepage handled the default way\n",
			    m->ino, ev.pfn, m->budget);
	mfr_event_send(&ev);
}

/*
 * The kernel lost track of which base pages of @folio are poisoned (no
 * memory to record @page): it does not keep the folio, or makes a kept
 * one fall back, whatever the budget says.  Each page keeps its record,
 * as on a budget fallback; the notification tells why.
 */
void mfr_policy_page_untracked(struct folio *folio, struct page *page)
{
	struct address_space *mapping = folio_mapping(folio);
	struct mfr_event ev = {
		.cmd = MFR_CMD_PAGE_UNTRACKED_NTF,
		.pfn = page_to_pfn(page),
		.head_pfn = folio_pfn(folio),
		.folio_size = folio_size(folio),
		.offset = ((u64)folio->index + folio_page_idx(folio, page)) <<
			  PAGE_SHIFT,
	};
	unsigned long was_kept;
	struct mfr_memfd *m;

	ev.state = MFR_PAGE_STATE_FALLBACK;
	if (!mapping) {
		/* Released, pending on a pin: offlined whole when freed. */
		ev.ino = mfr_poison_folio_ino(folio_pfn(folio),
					      folio_nr_pages(folio));
		ev.state = MFR_PAGE_STATE_PENDING;
		mfr_poison_add(folio, page, ev.ino, ev.state);
		mfr_event_send(&ev);
		return;
	}

	mutex_lock(&mfr_memfds_lock);
	m = mfr_memfd_find(mapping);
	if (m) {
		m->nr_poisoned++;
		ev.ino = m->ino;
	}
	if (folio_test_hugetlb_mfr_kept(folio)) {
		was_kept = mfr_poison_fall_back(folio_pfn(folio),
						folio_nr_pages(folio));
		atomic_long_sub(was_kept, &mfr_stats.raw_pages_kept);
		mfr_poison_add(folio, page, ev.ino, MFR_PAGE_STATE_FALLBACK);
	}
	mutex_unlock(&mfr_memfds_lock);
	pr_warn_ratelimited("memfd inode %llu: pfn %#llx poisoned, and the kernel lost track of which pages of its hugepage are: hugepage handled the default way\n",
			    ev.ino, ev.pfn);
	mfr_event_send(&ev);
}

/*
 * A new poisoned page of a kept folio its memfd released, pending on a pin:
 * the kernel keeps it whatever we say, a record is all there is to make.
 */
static bool mfr_policy_released_page_poisoned(struct folio *folio,
					      struct page *page)
{
	unsigned long ino = mfr_poison_folio_ino(folio_pfn(folio),
						 folio_nr_pages(folio));

	if (mfr_poison_add(folio, page, ino, MFR_PAGE_STATE_PENDING))
		return false;
	atomic_long_inc(&mfr_stats.raw_pages_kept);
	return true;
}

/*
 * Keep @folio mapped after its base page @page was poisoned?  Yes while
 * the memfd is within its budget of poisoned pages.
 */
bool mfr_policy_page_poisoned(struct folio *folio, struct page *page)
{
	struct address_space *mapping = folio_mapping(folio);
	unsigned long ino;
	struct mfr_memfd *m;

	if (!mapping)
		return mfr_policy_released_page_poisoned(folio, page);

	mutex_lock(&mfr_memfds_lock);
	m = mfr_memfd_find(mapping);
	if (!m) {
		/* Set back to the default policy meanwhile. */
		mutex_unlock(&mfr_memfds_lock);
		return false;
	}
	m->nr_poisoned++;
	if (m->budget && m->nr_poisoned > m->budget) {
		m->state = MFR_MEMFD_STATE_OVER_BUDGET;
		/* A hugepage that fell back already: the fallback was counted. */
		if (folio_test_hugetlb_mfr_unmapped(folio))
			mfr_poison_add(folio, page, m->ino,
				       MFR_PAGE_STATE_FALLBACK);
		else
			mfr_budget_exceeded(folio, page, m);
		mutex_unlock(&mfr_memfds_lock);
		return false;
	}
	if (m->state == MFR_MEMFD_STATE_CLEAN)
		m->state = MFR_MEMFD_STATE_POISONED;
	ino = m->ino;
	mutex_unlock(&mfr_memfds_lock);

	/* Without a record it could not be accounted: do not keep it. */
	if (mfr_poison_add(folio, page, ino, MFR_PAGE_STATE_KEPT))
		return false;
	atomic_long_inc(&mfr_stats.raw_pages_kept);
	pr_info_ratelimited("memfd inode %lu: pfn %#lx poisoned, its %lu KiB page stays mapped\n",
			    ino, page_to_pfn(page), folio_size(folio) >> 10);
	return true;
}

void mfr_policy_page_signalled(unsigned long pfn, struct task_struct *tsk,
			       bool action_required)
{
	mfr_poison_signalled(pfn, tsk, action_required);
}

/* Whether any hugepage of @mapping is poisoned. */
static bool mfr_mapping_poisoned(struct address_space *mapping)
{
	struct folio_batch fbatch;
	pgoff_t index = 0;
	bool poisoned = false;
	unsigned int i;

	folio_batch_init(&fbatch);
	while (!poisoned &&
	       filemap_get_folios(mapping, &index, ULONG_MAX, &fbatch)) {
		for (i = 0; i < folio_batch_count(&fbatch); i++)
			poisoned |= folio_test_hwpoison(fbatch.folios[i]);
		folio_batch_release(&fbatch);
		cond_resched();
	}
	return poisoned;
}

/*
 * The memfd is named by a descriptor of the caller's own: userspace takes
 * another process's with pidfd_getfd(2), whose ptrace-attach check is the
 * one that matters.  A generic netlink request runs in the sender's
 * context, so fget() looks in its table.
 */
static struct file *mfr_nl_memfd_file(struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct file *file;

	file = fget(nla_get_u32(tb[MFR_A_MEMFD_FD]));
	if (!file) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[MFR_A_MEMFD_FD],
				    "fd: not open in the calling process");
		return ERR_PTR(-EBADF);
	}
	if (!mfr_file_is_hugetlb(file)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[MFR_A_MEMFD_FD],
				    "fd: not a HugeTLB file");
		goto err_inval;
	}
	if (!mfr_memfd_name(file)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[MFR_A_MEMFD_FD],
				    "fd: a HugeTLB file but not a memfd");
		goto err_inval;
	}
	return file;
err_inval:
	fput(file);
	return ERR_PTR(-EINVAL);
}

static int mfr_nl_memfd_set_keep(struct genl_info *info, struct file *file,
				 u32 budget, struct sk_buff *msg)
{
	struct mem_cgroup *memcg = NULL, *old_memcg;
	struct task_struct *tsk;
	struct mfr_memfd *m;
	struct cgroup *cgrp;
	struct mm_struct *mm;
	u64 generation;
	kuid_t uid;
	int err = 0;

	mutex_lock(&mfr_memfds_lock);
	m = mfr_memfd_find(file->f_mapping);
	if (m) {
		/* Its hugepages were kept under the old budget: too late. */
		if (m->nr_poisoned) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[MFR_A_MEMFD_FD],
					    "fd: the memfd already has poisoned pages");
			err = -EBUSY;
			goto out;
		}
		m->budget = budget;
		err = mfr_memfd_fill_reply(msg, m, mfr_state_changed());
		goto out;
	}
	mutex_unlock(&mfr_memfds_lock);

	if (mfr_mapping_poisoned(file->f_mapping)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MFR_A_MEMFD_FD],
				    "fd: the memfd already has poisoned pages");
		return -EBUSY;
	}
	/*
	 * Owner: the process the caller took the memfd from; it may not have
	 * made it.
	 */
	rcu_read_lock();
	tsk = pid_task(find_vpid(nla_get_u32(info->attrs[MFR_A_MEMFD_PID])),
		       PIDTYPE_TGID);
	if (tsk) {
		get_task_struct(tsk);
		cgrp = task_dfl_cgroup(tsk);
		cgroup_get(cgrp);
		uid = task_uid(tsk);
	}
	rcu_read_unlock();
	if (!tsk) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MFR_A_MEMFD_PID],
				    "pid: no such process");
		return -ESRCH;
	}
	/*
	 * The record is the holder's to pay for, not the operator's (the
	 * few bytes of index nodes are the operator's).
	 */
	mm = get_task_mm(tsk);
	if (mm) {
		memcg = get_mem_cgroup_from_mm(mm);
		mmput(mm);
	}
	old_memcg = set_active_memcg(memcg);
	m = mfr_memfd_new(file, mfr_memfd_name(file), tsk, uid, cgrp);
	set_active_memcg(old_memcg);
	mem_cgroup_put(memcg);
	cgroup_put(cgrp);
	put_task_struct(tsk);
	if (!m)
		return -ENOMEM;
	m->budget = budget;
	if (!try_module_get(THIS_MODULE)) {
		mfr_memfd_free(m);
		return -ENODEV;
	}

	mutex_lock(&mfr_memfds_lock);
	if (!mfr_policy_live) {
		mutex_unlock(&mfr_memfds_lock);
		module_put(THIS_MODULE);
		mfr_memfd_free(m);
		NL_SET_ERR_MSG(info->extack, "mfr is still loading: try again");
		return -EAGAIN;
	}
	if (mfr_memfd_find(file->f_mapping)) {
		/* A concurrent memfd-set won. */
		mutex_unlock(&mfr_memfds_lock);
		module_put(THIS_MODULE);
		mfr_memfd_free(m);
		return -EAGAIN;
	}
	err = mfr_memfd_keep(m, &generation);
	if (err) {
		mutex_unlock(&mfr_memfds_lock);
		module_put(THIS_MODULE);
		mfr_memfd_free(m);
		return err;
	}
	err = mfr_memfd_fill_reply(msg, m, generation);
	module_put(THIS_MODULE);
out:
	mutex_unlock(&mfr_memfds_lock);
	return err;
}

static int mfr_nl_memfd_set_default(struct genl_info *info, struct file *file,
				    struct sk_buff *msg)
{
	struct mfr_memfd *m;
	u64 generation;

	mutex_lock(&mfr_memfds_lock);
	m = mfr_memfd_find(file->f_mapping);
	if (m && m->nr_poisoned) {
		mutex_unlock(&mfr_memfds_lock);
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MFR_A_MEMFD_FD],
				    "fd: the memfd already has poisoned pages");
		return -EBUSY;
	}
	/* One change of state, as for every successful write request. */
	if (m) {
		generation = mfr_memfd_forget(m);
		mapping_clear_mf_keep_ue_mapped(m->mapping);
	} else {
		generation = mfr_state_changed();
	}
	mutex_unlock(&mfr_memfds_lock);
	if (m) {
		mfr_memfd_free(m);
		module_put(THIS_MODULE);
	}

	if (nla_put_uint(msg, MFR_A_MEMFD_INODE, file_inode(file)->i_ino) ||
	    nla_put_u32(msg, MFR_A_MEMFD_POLICY, MFR_POLICY_DEFAULT) ||
	    nla_put_uint(msg, MFR_A_MEMFD_GENERATION, generation))
		return -EMSGSIZE;
	return 0;
}

int mfr_nl_memfd_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **tb = info->attrs;
	struct sk_buff *msg;
	struct file *file;
	bool keep;
	u32 budget = 0;
	void *hdr;
	int err;

	if (mfr_nl_missing(info, MFR_A_MEMFD_PID, "pid") ||
	    mfr_nl_missing(info, MFR_A_MEMFD_FD, "fd") ||
	    mfr_nl_missing(info, MFR_A_MEMFD_POLICY, "policy"))
		return -EINVAL;
	keep = nla_get_u32(tb[MFR_A_MEMFD_POLICY]) == MFR_POLICY_KEEP;
	if (tb[MFR_A_MEMFD_BUDGET]) {
		if (!keep) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[MFR_A_MEMFD_BUDGET],
					    "budget: only for policy keep");
			return -EINVAL;
		}
		budget = nla_get_u32(tb[MFR_A_MEMFD_BUDGET]);
	}

	file = mfr_nl_memfd_file(info);
	if (IS_ERR(file))
		return PTR_ERR(file);

	msg = mfr_nl_reply_new(info, &hdr);
	if (!msg) {
		err = -ENOMEM;
		goto out;
	}
	if (keep)
		err = mfr_nl_memfd_set_keep(info, file, budget, msg);
	else
		err = mfr_nl_memfd_set_default(info, file, msg);
	if (err)
		nlmsg_free(msg);
	else
		err = mfr_nl_reply_send(msg, hdr, info);
out:
	fput(file);
	return err;
}

/*
 * Resumes after the last id sent, so memfds created or evicted between two
 * passes neither repeat nor hide others; such dumps are marked interrupted.
 */
int mfr_nl_memfd_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long *next_id = (unsigned long *)cb->ctx;
	struct mfr_memfd *m;
	unsigned long id;
	u64 generation;
	void *hdr;
	int err = 0;

	mutex_lock(&mfr_memfds_lock);
	generation = mfr_nl_dump_seq(cb);
	xa_for_each_start(&mfr_memfds, id, m, *next_id) {
		hdr = mfr_nl_dump_put(skb, cb, MFR_CMD_MEMFD_GET);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		err = mfr_memfd_fill_reply(skb, m, generation);
		if (err) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		*next_id = id + 1;
	}
	mutex_unlock(&mfr_memfds_lock);
	return mfr_nl_dump_done(skb, err);
}
