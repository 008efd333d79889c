// SPDX-License-Identifier: GPL-2.0-only
/*
 * A test module that holds a file's i_mmap_rwsem for reading on demand, so
 * that memory_failure() cannot take it for writing (it only tries) and
 * leaves a poisoned HugeTLB folio mapped: the state the kernel is in for a
 * moment during every error, made to last.  The tests then check what a
 * kernel with the hook series, and no policy module, does with it: the
 * same as a kernel without the series.  Never loaded outside the VM tests.
 *
 * /sys/kernel/debug/mfr_immap_hold: write a file descriptor number of the
 * writer to hold that file's i_mmap_rwsem until "-1" is written; a kernel
 * thread holds it, since a task must not return to user space holding a
 * lock.
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/module.h>

static struct dentry *hold_file;
static DEFINE_MUTEX(hold_mutex);
static struct task_struct *holder;
static DECLARE_COMPLETION(held);

static int holder_fn(void *data)
{
	struct file *file = data;

	i_mmap_lock_read(file->f_mapping);
	complete(&held);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	i_mmap_unlock_read(file->f_mapping);
	fput(file);
	return 0;
}

static void release_hold(void)
{
	if (holder) {
		kthread_stop(holder);
		put_task_struct(holder);
		holder = NULL;
	}
}

static ssize_t hold_write(struct file *f, const char __user *buf, size_t len,
			  loff_t *ppos)
{
	struct task_struct *t;
	struct file *file;
	int fd, err;

	err = kstrtoint_from_user(buf, len, 0, &fd);
	if (err)
		return err;
	mutex_lock(&hold_mutex);
	release_hold();
	if (fd < 0)
		goto out;
	file = fget(fd);
	if (!file) {
		err = -EBADF;
		goto out;
	}
	reinit_completion(&held);
	t = kthread_create(holder_fn, file, "mfr_immap_hold");
	if (IS_ERR(t)) {
		fput(file);
		err = PTR_ERR(t);
		goto out;
	}
	get_task_struct(t);
	holder = t;
	wake_up_process(t);
	wait_for_completion(&held);
out:
	mutex_unlock(&hold_mutex);
	return err ? err : len;
}

static const struct file_operations hold_fops = {
	.owner = THIS_MODULE,
	.write = hold_write,
};

static int __init immap_hold_init(void)
{
	hold_file = debugfs_create_file("mfr_immap_hold", 0200, NULL, NULL,
					&hold_fops);
	return 0;
}

static void __exit immap_hold_exit(void)
{
	debugfs_remove(hold_file);
	mutex_lock(&hold_mutex);
	release_hold();
	mutex_unlock(&hold_mutex);
}

module_init(immap_hold_init);
module_exit(immap_hold_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("mfr tests: hold a file's i_mmap_rwsem for reading");
