// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A small client of the "mfr" generic netlink family over libnl-genl-3,
 * shared by mfrctl and mfrd: requests (do and dump) on one handle, the
 * "events" multicast group on another, and the kernel's own account of
 * a refusal (errno plus extended ACK) kept for the caller to print.
 */
#ifndef MFR_GENL_H
#define MFR_GENL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "mfr-spec.h"

/* Failures that are not an errno; returned negated like errnos. */
#define MFR_GENL_ENOFAMILY	4096	/* no "mfr" family: mfr.ko not loaded */
#define MFR_GENL_ENOGROUP	4097	/* the family has no "events" group */
#define MFR_GENL_EOVERRUN	4098	/* events lost: receive buffer overran */

/* Why the last operation on a handle failed. */
struct mfr_genl_error {
	int errnum;		/* errno or MFR_GENL_E*, 0 if it succeeded */
	char msg[256];		/* the kernel's extack message, "" if none */
	const char *attr;	/* the attribute the kernel blamed, or NULL */
	bool attr_missing;	/* ... because the request lacked it */
	uint32_t offset;	/* of that attribute in the request, or 0 */
};

struct mfr_genl;

/*
 * Called for each reply or notification with its attributes, validated
 * against the command's attribute set: tb[type] is NULL when absent.
 * Return 0 to go on, a positive value to stop early, or a negative errno
 * to stop and fail the operation with it.
 */
typedef int (*mfr_genl_cb)(uint8_t cmd, const struct mfr_attr_set *set,
			   struct nlattr **tb, void *arg);

/*
 * Open a generic netlink socket and resolve the "mfr" family.  Returns 0
 * and the handle in *gp, -MFR_GENL_ENOFAMILY when the module is not
 * loaded, or another negative errno.
 */
int mfr_genl_open(struct mfr_genl **gp);
void mfr_genl_close(struct mfr_genl *g);

/* A request message for cmd, to fill with nla_put*() and give to do. */
struct nl_msg *mfr_genl_request(struct mfr_genl *g, uint8_t cmd);
/* The same with room for size bytes of attributes (default: a page). */
struct nl_msg *mfr_genl_request_sized(struct mfr_genl *g, uint8_t cmd,
				      size_t size);

/*
 * Send a request and wait for the kernel's answer: cb sees the reply, if
 * the command has one.  Returns 0 or a negative errno (details in
 * mfr_genl_last_error()).  The caller still owns and frees req.
 */
int mfr_genl_do(struct mfr_genl *g, struct nl_msg *req, mfr_genl_cb cb,
		void *arg);

/*
 * Dump everything cmd lists.  A dump the kernel marks as interrupted by a
 * concurrent change (NLM_F_DUMP_INTR) is retried, and cb only ever sees
 * the records of one consistent dump.  Returns 0 or a negative errno
 * (-EAGAIN when the state kept changing under every retry).
 */
int mfr_genl_dump(struct mfr_genl *g, uint8_t cmd, mfr_genl_cb cb, void *arg);

/*
 * Turn the handle into a listener of the "events" group (needs
 * CAP_SYS_ADMIN): a big receive buffer, non-blocking, no more requests.
 */
int mfr_genl_subscribe(struct mfr_genl *g);

/* The socket to poll() for events. */
int mfr_genl_fd(const struct mfr_genl *g);

/*
 * Read one batch of pending events, calling cb for each.  Returns 0 (also
 * when nothing was pending), -MFR_GENL_EOVERRUN when the kernel dropped
 * events because the receive buffer was full (the socket stays usable),
 * or another negative errno.
 */
int mfr_genl_recv_events(struct mfr_genl *g, mfr_genl_cb cb, void *arg);

const struct mfr_genl_error *mfr_genl_last_error(const struct mfr_genl *g);

/*
 * Print err's text to f, then the kernel's extack message and the
 * attribute it blamed if they are about this failure (no newline).
 * Returns true if the kernel's answer to this failure gave neither.
 */
bool mfr_genl_print_error(FILE *f, const struct mfr_genl *g, int err);

/* strerror() that also knows the MFR_GENL_E* codes; err may be negated. */
const char *mfr_genl_strerror(int err);

/* The value of a u32 or uint attribute. */
uint64_t mfr_genl_get_uint(const struct nlattr *nla);

#endif /* MFR_GENL_H */
