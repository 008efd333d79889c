// SPDX-License-Identifier: GPL-2.0-only
/*
 * A test module that copies from a user address of another process again
 * and again in a kernel thread that never returns to user space, as a
 * vhost worker reads a virtqueue: what repeated machine checks on a page
 * a memory-failure recovery policy keeps mapped poisoned do to such a
 * thread (make test-mce).  Never loaded outside the VM tests.
 *
 * /sys/kernel/debug/mfr_copyin_loop: write "PID ADDR LEN CPU" to start a
 * thread bound to CPU that copies LEN bytes from ADDR in PID's mm, with
 * interrupts off for 200 ms at a time (so that a machine check sent
 * to that CPU lands in a copy), or "stop" to stop it; read "copies N
 * failed M": copies made and copies that failed (a machine check fixed up
 * in the copy).
 */
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/sizes.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

static struct dentry *loop_file;
static DEFINE_MUTEX(loop_mutex);
static struct task_struct *looper;
static atomic_long_t copies, failed;

struct loop_args {
	struct mm_struct *mm;
	unsigned long addr;
	size_t len;
};

static int loop_fn(void *data)
{
	struct loop_args *a = data;
	unsigned long flags;
	void *buf = vmalloc(a->len);

	if (!buf)
		goto out;
	kthread_use_mm(a->mm);
	while (!kthread_should_stop()) {
		u64 t0 = ktime_get_ns();

		/*
		 * A fifth of a second with interrupts off at a time: a machine
		 * check sent to this CPU then lands in a copy (the only
		 * recoverable place), not in an interrupt, all but once in
		 * hundreds, and the other CPU's IPIs wait no longer than that.
		 */
		pagefault_disable();
		local_irq_save(flags);
		do {
			/* Uninstrumented, as a worker's copy loop is mostly the copy. */
			if (raw_copy_from_user(buf, (const void __user *)a->addr, a->len))
				atomic_long_inc(&failed);
			atomic_long_inc(&copies);
		} while (ktime_get_ns() - t0 < NSEC_PER_SEC / 5);
		local_irq_restore(flags);
		pagefault_enable();
		cond_resched();
	}
	kthread_unuse_mm(a->mm);
	vfree(buf);
out:
	mmput(a->mm);
	kfree(a);
	return 0;
}

static void loop_stop(void)
{
	if (looper) {
		kthread_stop(looper);
		put_task_struct(looper);
		looper = NULL;
	}
}

static ssize_t loop_write(struct file *f, const char __user *ubuf, size_t len,
			  loff_t *ppos)
{
	struct task_struct *t, *owner;
	struct loop_args *a;
	struct pid *spid;
	char buf[96];
	unsigned int cpu;
	int pid, err = 0;

	if (len >= sizeof(buf) || copy_from_user(buf, ubuf, len))
		return -EINVAL;
	buf[len] = 0;
	mutex_lock(&loop_mutex);
	loop_stop();
	if (sysfs_streq(buf, "stop"))
		goto out;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a) {
		err = -ENOMEM;
		goto out;
	}
	if (sscanf(buf, "%d %lx %zu %u", &pid, &a->addr, &a->len, &cpu) != 4 ||
	    !a->len || a->len > SZ_2M || cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		kfree(a);
		err = -EINVAL;
		goto out;
	}
	spid = find_get_pid(pid);
	owner = spid ? get_pid_task(spid, PIDTYPE_PID) : NULL;
	put_pid(spid);
	a->mm = owner ? get_task_mm(owner) : NULL;
	if (owner)
		put_task_struct(owner);
	if (!a->mm) {
		kfree(a);
		err = -ESRCH;
		goto out;
	}
	atomic_long_set(&copies, 0);
	atomic_long_set(&failed, 0);
	t = kthread_create(loop_fn, a, "mfr_copyin_loop");
	if (IS_ERR(t)) {
		mmput(a->mm);
		kfree(a);
		err = PTR_ERR(t);
		goto out;
	}
	kthread_bind(t, cpu);
	get_task_struct(t);
	looper = t;
	wake_up_process(t);
out:
	mutex_unlock(&loop_mutex);
	return err ? err : len;
}

static ssize_t loop_read(struct file *f, char __user *ubuf, size_t len,
			 loff_t *ppos)
{
	char buf[64];
	int n = scnprintf(buf, sizeof(buf), "copies %ld failed %ld\n",
			  atomic_long_read(&copies), atomic_long_read(&failed));

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations loop_fops = {
	.owner = THIS_MODULE,
	.read = loop_read,
	.write = loop_write,
};

static int __init copyin_loop_init(void)
{
	loop_file = debugfs_create_file("mfr_copyin_loop", 0600, NULL, NULL,
					&loop_fops);
	return 0;
}

static void __exit copyin_loop_exit(void)
{
	debugfs_remove(loop_file);
	mutex_lock(&loop_mutex);
	loop_stop();
	mutex_unlock(&loop_mutex);
}

module_init(copyin_loop_init);
module_exit(copyin_loop_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("mfr tests: a kernel thread copying from user memory in a loop");
