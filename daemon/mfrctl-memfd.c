// SPDX-License-Identifier: GPL-2.0-or-later
/* mfrctl memfd list|set: the memfds that keep poisoned pages mapped. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include "mfrctl.h"

const struct column memfd_cols[] = {
	COLUMN("INODE", true, MFR_A_MEMFD_INODE, "inode number of the memfd"),
	COLUMN("NAME", false, MFR_A_MEMFD_NAME, "name given to memfd_create()"),
	COLUMN("PID", true, MFR_A_MEMFD_PID, "pid of the task that created it"),
	COLUMN("COMM", false, MFR_A_MEMFD_COMM, "command name of that task"),
	COLUMN_OR("CGROUP", false, MFR_A_MEMFD_CGROUP_PATH,
		  MFR_A_MEMFD_CGROUP_ID, "its cgroup v2 (path, or id)"),
	COLUMN("SIZE", true, MFR_A_MEMFD_SIZE, "size of the memfd"),
	COLUMN("HPAGE", true, MFR_A_MEMFD_HUGEPAGE_SIZE, "size of its hugepages"),
	COLUMN("POLICY", false, MFR_A_MEMFD_POLICY, "keep or default"),
	COLUMN("BUDGET", true, MFR_A_MEMFD_BUDGET,
	       "poisoned 4 KiB pages it may keep"),
	COLUMN("POISONED", true, MFR_A_MEMFD_RAW_PAGES_POISONED,
	       "its poisoned 4 KiB pages"),
	COLUMN("STATE", false, MFR_A_MEMFD_STATE, "clean, poisoned or over-budget"),
	COLUMN("RULE", true, MFR_A_MEMFD_RULE_ID, "id of the rule that opted it in"),
};
const size_t memfd_ncols = ARRAY_SIZE(memfd_cols);

int memfd_list_run(struct mfrctl *ctl)
{
	return list_records(ctl, MFR_CMD_MEMFD_GET, memfd_cols,
			    ARRAY_SIZE(memfd_cols));
}

/* The process holding the memfd: pid_max can be 4194304. */
#define PID_MAX		4194304
#define FD_MAX		2147483647

int memfd_set_parse(struct mfrctl *ctl, char **args)
{
	return parse_u32("pid", args[0], 1, PID_MAX, &ctl->pid) ?:
	       parse_u32("fd", args[1], 0, FD_MAX, &ctl->fd) ?:
	       parse_policy("policy", args[2], &ctl->policy);
}

/*
 * The module takes the memfd as a descriptor of ours: pidfd_getfd(2)
 * copies it from the process, and checks that we may ptrace-attach it.
 * 0 and *fd, or an exit status, with the reason printed.
 */
static int memfd_take(struct mfrctl *ctl, int *fd)
{
	int pidfd, err;

	pidfd = pidfd_open(ctl->pid, 0);
	if (pidfd < 0) {
		err = errno;
		fprintf(stderr, "mfrctl: %s: process %u: %s\n", ctl->what,
			ctl->pid, strerror(err));
		return err == EPERM ? EXIT_DENIED : EXIT_FAILED;
	}
	*fd = pidfd_getfd(pidfd, ctl->fd, 0);
	err = errno;
	close(pidfd);
	if (*fd >= 0)
		return EXIT_OK;
	fprintf(stderr, "mfrctl: %s: fd %u of process %u: %s%s\n", ctl->what,
		ctl->fd, ctl->pid, strerror(err),
		err == EPERM ? ": needs ptrace-attach rights on the process" : "");
	return err == EPERM ? EXIT_DENIED : EXIT_FAILED;
}

/* The kernel answers with the memfd as it is now: show it like a list. */
int memfd_set_run(struct mfrctl *ctl)
{
	struct listing l;
	struct nl_msg *req;
	int fd, ret;

	ret = memfd_take(ctl, &fd);
	if (ret)
		return ret;
	req = mfr_genl_request(ctl->genl, MFR_CMD_MEMFD_SET);
	if (!req) {
		close(fd);
		return mfrctl_fail(ctl, -ENOMEM);
	}
	ret = listing_init(&l, memfd_cols, ARRAY_SIZE(memfd_cols), ctl->json,
			   true);
	if (!ret &&
	    (nla_put_u32(req, MFR_A_MEMFD_PID, ctl->pid) ||
	     nla_put_u32(req, MFR_A_MEMFD_FD, fd) ||
	     nla_put_u32(req, MFR_A_MEMFD_POLICY, ctl->policy) ||
	     ((ctl->given & OPT_BUDGET) &&
	      nla_put_u32(req, MFR_A_MEMFD_BUDGET, ctl->budget))))
		ret = -ENOMEM;
	if (!ret)
		ret = mfr_genl_do(ctl->genl, req, listing_add, &l);
	/* Ours would keep the memfd alive after its process closed it. */
	close(fd);
	if (!ret)
		ret = listing_print(&l);
	listing_free(&l);
	nlmsg_free(req);
	return ret ? mfrctl_fail(ctl, ret) : EXIT_OK;
}
