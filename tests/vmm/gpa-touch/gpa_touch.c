// SPDX-License-Identifier: GPL-2.0-only
/*
 * gpa_touch: read one guest physical page on purpose, from the guest's
 * kernel and from its user mode, after the host said it is poisoned.
 *
 * The guest's own memory-failure handling has by then taken the page
 * out of its direct map and away from every process, so nothing else
 * reaches it; this module makes fresh mappings of it:
 *
 *   pread(fd, buf, n, GPA)   reads n bytes at GPA in kernel mode through
 *                            a vmap() of the page, with copy_mc_to_kernel()
 *                            (a machine check there is recoverable): the
 *                            bytes, or -EIO when the read took a machine
 *                            check (logged with the bytes not copied)
 *   mmap(fd, ..., GPA)       maps the page at GPA into the caller
 *                            (VM_MIXEDMAP, so the guest's memory-failure
 *                            finds the mapping and sends the reader
 *                            SIGBUS BUS_MCEERR_AR at the exact address)
 *
 * The device is /dev/gpa_touch, root only.  Only pages the guest kernel
 * calls HWPoison are served: this is a test instrument, not /dev/mem.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/page-flags.h>
#include <linux/pfn_t.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <asm/cpufeature.h>

/* The page at @gpa, if it is RAM the guest kernel marked poisoned. */
static struct page *gpa_touch_page(loff_t gpa)
{
	unsigned long pfn = gpa >> PAGE_SHIFT;
	struct page *page;

	if (gpa < 0 || !pfn_valid(pfn))
		return NULL;
	page = pfn_to_page(pfn);
	return PageHWPoison(page) ? page : NULL;
}

static ssize_t gpa_touch_read(struct file *file, char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	loff_t gpa = *ppos;
	size_t off = offset_in_page(gpa);
	unsigned long left;
	struct page *page;
	void *map, *buf;
	ssize_t ret;

	page = gpa_touch_page(gpa);
	if (!page)
		return -EINVAL;
	len = min_t(size_t, len, PAGE_SIZE - off);
	buf = kmalloc(len, GFP_KERNEL);
	map = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
	if (!buf || !map) {
		ret = -ENOMEM;
		goto out;
	}
	left = copy_mc_to_kernel(buf, map + off, len);
	pr_info("gpa_touch: kernel read of %zu bytes at gpa 0x%llx: %lu not copied (erms %d)\n",
		len, gpa, left, boot_cpu_has(X86_FEATURE_ERMS));
	if (left) {
		ret = -EIO;
		goto out;
	}
	ret = copy_to_user(ubuf, buf, len) ? -EFAULT : len;
out:
	if (map)
		vunmap(map);
	kfree(buf);
	return ret;
}

static vm_fault_t gpa_touch_fault(struct vm_fault *vmf)
{
	/* The file offset is the guest physical address: pgoff is the pfn. */
	return vmf_insert_mixed(vmf->vma, vmf->address,
				__pfn_to_pfn_t(vmf->pgoff, 0));
}

static const struct vm_operations_struct gpa_touch_vm_ops = {
	.fault = gpa_touch_fault,
};

static int gpa_touch_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    !gpa_touch_page((loff_t)vma->vm_pgoff << PAGE_SHIFT))
		return -EINVAL;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP);
#else
	vma->vm_flags |= VM_MIXEDMAP | VM_DONTEXPAND | VM_DONTDUMP;
#endif
	vma->vm_ops = &gpa_touch_vm_ops;
	return 0;
}

static const struct file_operations gpa_touch_fops = {
	.owner = THIS_MODULE,
	.read = gpa_touch_read,
	.mmap = gpa_touch_mmap,
	.llseek = default_llseek,
};

static struct miscdevice gpa_touch_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "gpa_touch",
	.fops = &gpa_touch_fops,
	.mode = 0600,
};

module_misc_device(gpa_touch_dev);
MODULE_DESCRIPTION("Read a poisoned guest physical page on purpose (test instrument)");
MODULE_LICENSE("GPL");
