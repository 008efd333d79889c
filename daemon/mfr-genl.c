// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libnl-genl-3 client of the mfr family.  libnl 3.7 reports a kernel
 * refusal as its own error code and drops the extended ACK, so requests
 * run with custom callbacks that keep the kernel's errno and message.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/handlers.h>

#include "mfr-genl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

/* Retries of a dump that a concurrent change interrupted. */
#define DUMP_TRIES	8

/* Receive buffer of an events listener: bursts of errors must fit. */
#define EVENTS_RCVBUF	(16 << 20)

struct mfr_genl {
	struct nl_sock *sk;
	int family;
	bool subscribed;
	struct mfr_genl_error err;
};

/* The state of one request while its answer comes in. */
struct request {
	struct mfr_genl *g;
	struct nl_msg *req;
	const struct mfr_attr_set *set;	/* of replies; NULL: by their cmd */
	mfr_genl_cb cb;
	void *arg;
	bool keep;		/* buffer replies until a dump is complete */
	struct nl_msg **kept;
	size_t nkept, kept_size;
	bool done;		/* ACK, error or end of dump seen */
	bool interrupted;	/* NLM_F_DUMP_INTR on some part of a dump */
	bool stopped;		/* cb asked to stop */
	int error;		/* negative errno: the kernel's, or ours */
};

/* libnl error codes back to the errno they (mostly) came from. */
static int nle_to_errno(int nle)
{
	switch (abs(nle)) {
	case NLE_INTR: return EINTR;
	case NLE_BAD_SOCK: return EBADF;
	case NLE_AGAIN: return EAGAIN;
	case NLE_NOMEM: return ENOMEM;
	case NLE_EXIST: return EEXIST;
	case NLE_INVAL: return EINVAL;
	case NLE_RANGE: return ERANGE;
	case NLE_MSGSIZE: return EMSGSIZE;
	case NLE_OPNOTSUPP: return EOPNOTSUPP;
	case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND: return ENOENT;
	case NLE_MSG_TRUNC: return EMSGSIZE;
	case NLE_NOADDR: return EADDRNOTAVAIL;
	case NLE_MSG_TOOSHORT: return EBADMSG;
	case NLE_BUSY: return EBUSY;
	case NLE_PROTO_MISMATCH: return EPROTONOSUPPORT;
	case NLE_NOACCESS: return EACCES;
	case NLE_PERM: return EPERM;
	case NLE_NODEV: return ENODEV;
	default: return EPROTO;
	}
}

static void clear_error(struct mfr_genl *g)
{
	memset(&g->err, 0, sizeof(g->err));
}

/* Record a failure that libnl reported; its text only when lossy. */
static int libnl_error(struct mfr_genl *g, int nle)
{
	g->err.errnum = nle_to_errno(nle);
	if (g->err.errnum == EPROTO)
		snprintf(g->err.msg, sizeof(g->err.msg), "libnl: %s",
			 nl_geterror(nle));
	return -g->err.errnum;
}

static int fail(struct mfr_genl *g, int errnum, const char *msg)
{
	g->err.errnum = errnum;
	snprintf(g->err.msg, sizeof(g->err.msg), "%s", msg);
	return -errnum;
}

int mfr_genl_open(struct mfr_genl **gp)
{
	struct mfr_genl *g;
	int one = 1;
	int ret;

	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->sk = nl_socket_alloc();
	if (!g->sk) {
		free(g);
		return -ENOMEM;
	}
	ret = genl_connect(g->sk);
	if (ret < 0) {
		ret = -nle_to_errno(ret);
		goto err;
	}
	/*
	 * Extended ACK carries the kernel's reason for a refusal; a kernel
	 * without it still gives the errno, so failing here is not fatal.
	 * CAP_ACK keeps our own request out of error messages.
	 */
	setsockopt(nl_socket_get_fd(g->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	setsockopt(nl_socket_get_fd(g->sk), SOL_NETLINK, NETLINK_CAP_ACK,
		   &one, sizeof(one));

	ret = genl_ctrl_resolve(g->sk, MFR_FAMILY_NAME);
	if (ret < 0) {
		ret = ret == -NLE_OBJ_NOTFOUND ? -MFR_GENL_ENOFAMILY :
						 -nle_to_errno(ret);
		goto err;
	}
	g->family = ret;
	*gp = g;
	return 0;
err:
	nl_socket_free(g->sk);
	free(g);
	return ret;
}

void mfr_genl_close(struct mfr_genl *g)
{
	if (!g)
		return;
	nl_socket_free(g->sk);
	free(g);
}

int mfr_genl_fd(const struct mfr_genl *g)
{
	return nl_socket_get_fd(g->sk);
}

const struct mfr_genl_error *mfr_genl_last_error(const struct mfr_genl *g)
{
	return &g->err;
}

const char *mfr_genl_strerror(int err)
{
	switch (abs(err)) {
	case MFR_GENL_ENOFAMILY:
		return "the mfr module is not loaded (no \"" MFR_FAMILY_NAME
		       "\" generic netlink family)";
	case MFR_GENL_ENOGROUP:
		return "the mfr module has no \"" MFR_MCGRP_EVENTS
		       "\" multicast group";
	case MFR_GENL_EOVERRUN:
		return "events lost: the receive buffer overran";
	default:
		return strerror(abs(err));
	}
}

uint64_t mfr_genl_get_uint(const struct nlattr *nla)
{
	return nla_len(nla) >= 8 ? nla_get_u64(nla) : nla_get_u32(nla);
}

struct nl_msg *mfr_genl_request(struct mfr_genl *g, uint8_t cmd)
{
	return mfr_genl_request_sized(g, cmd, 0);
}

struct nl_msg *mfr_genl_request_sized(struct mfr_genl *g, uint8_t cmd,
				      size_t size)
{
	struct nl_msg *msg = size ?
		nlmsg_alloc_size(NLMSG_HDRLEN + GENL_HDRLEN + size) :
		nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, g->family, 0,
				0, cmd, MFR_FAMILY_VERSION)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return msg;
}

/*
 * The name of the attribute at bad, within the attributes at head of
 * set: an attribute inside a nest is named by the nest's set.
 */
static const char *attr_at(const struct mfr_attr_set *set,
			   struct nlattr *head, int len, const char *bad)
{
	const struct mfr_attr *a;
	struct nlattr *nla;
	int rem;

	nla_for_each_attr(nla, head, len, rem) {
		if ((char *)nla == bad)
			return mfr_attr_name(set, nla_type(nla));
		if (bad < (char *)nla || bad >= (char *)nla + nla->nla_len)
			continue;
		if ((unsigned int)nla_type(nla) > set->max)
			return NULL;
		a = &set->attrs[nla_type(nla)];
		if (a->type != MFR_ATTR_NEST)
			return a->name;
		return attr_at(a->nested, nla_data(nla), nla_len(nla), bad);
	}
	return NULL;
}

/*
 * Keep the extended ACK that follows hlen bytes of an NLMSG_ERROR or
 * NLMSG_DONE payload: the message, and the attribute it is about, named
 * from the request's attribute set.
 */
static void read_ext_ack(struct request *r, struct nlmsghdr *nlh, int hlen)
{
	static struct nla_policy policy[NLMSGERR_ATTR_MAX + 1] = {
		[NLMSGERR_ATTR_MSG] = { .type = NLA_STRING },
		[NLMSGERR_ATTR_OFFS] = { .type = NLA_U32 },
		[NLMSGERR_ATTR_MISS_TYPE] = { .type = NLA_U32 },
	};
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct mfr_genl_error *e = &r->g->err;
	const struct mfr_attr_set *set = r->set;
	struct nlmsghdr *req;
	uint32_t offs;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) || hlen < 0 ||
	    nlmsg_datalen(nlh) <= (int)NLMSG_ALIGN(hlen) ||
	    nlmsg_parse(nlh, hlen, tb, NLMSGERR_ATTR_MAX, policy) < 0)
		return;

	if (tb[NLMSGERR_ATTR_MSG])
		snprintf(e->msg, sizeof(e->msg), "%s",
			 nla_get_string(tb[NLMSGERR_ATTR_MSG]));
	if (!set || !r->req)
		return;
	if (tb[NLMSGERR_ATTR_MISS_TYPE]) {
		e->attr = mfr_attr_name(set,
					nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
		e->attr_missing = e->attr != NULL;
	} else if (tb[NLMSGERR_ATTR_OFFS]) {
		/* The offset is into our request: find what is there. */
		req = nlmsg_hdr(r->req);
		offs = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
		if (offs >= NLMSG_HDRLEN + GENL_HDRLEN &&
		    offs <= req->nlmsg_len - sizeof(struct nlattr)) {
			e->offset = offs;
			e->attr = attr_at(set, genlmsg_attrdata(nlmsg_data(req), 0),
					  genlmsg_attrlen(nlmsg_data(req), 0),
					  (char *)req + offs);
		}
	}
}

static int error_cb(struct sockaddr_nl *who, struct nlmsgerr *err, void *arg)
{
	/* libnl hands over the payload of the NLMSG_ERROR message */
	struct nlmsghdr *nlh = (struct nlmsghdr *)err - 1;
	struct request *r = arg;
	int hlen = sizeof(*err);

	(void)who;
	r->done = true;
	r->error = err->error < 0 ? err->error : -EPROTO;
	clear_error(r->g);
	r->g->err.errnum = -r->error;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		hlen += (int)err->msg.nlmsg_len - NLMSG_HDRLEN;
	read_ext_ack(r, nlh, hlen);
	return NL_STOP;
}

static int ack_cb(struct nl_msg *msg, void *arg)
{
	struct request *r = arg;

	(void)msg;
	r->done = true;
	return NL_STOP;
}

/* NLMSG_DONE: the end of a dump, with an errno if the dump failed. */
static int finish_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct request *r = arg;
	int err;

	r->done = true;
	if (nlmsg_datalen(nlh) < (int)sizeof(err))
		return NL_STOP;
	memcpy(&err, nlmsg_data(nlh), sizeof(err));
	if (err < 0) {
		r->error = err;
		clear_error(r->g);
		r->g->err.errnum = -err;
		read_ext_ack(r, nlh, sizeof(err));
	}
	return NL_STOP;
}

static int dump_intr_cb(struct nl_msg *msg, void *arg)
{
	struct request *r = arg;

	(void)msg;
	r->interrupted = true;
	return NL_OK;
}

/* Validate a message from the kernel and give it to the caller. */
static int deliver(struct request *r, struct nl_msg *msg)
{
	struct nla_policy policy[MFR_SPEC_MAX_ATTR + 1] = { 0 };
	struct nlattr *tb[MFR_SPEC_MAX_ATTR + 1];
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	const struct mfr_attr_set *set;
	unsigned int i;
	uint8_t cmd;
	int ret;

	/* Only the kernel speaks for the family. */
	if (nlmsg_get_src(msg)->nl_pid || nlh->nlmsg_type != r->g->family ||
	    !genlmsg_valid_hdr(nlh, 0))
		return 0;
	cmd = genlmsg_hdr(nlh)->cmd;
	set = r->set ? r->set : mfr_cmd_attr_set(cmd);
	if (!set)
		return 0;	/* a notification newer than this program */

	for (i = 1; i <= set->max; i++) {
		switch (set->attrs[i].type) {
		case MFR_ATTR_U32:
			policy[i].type = NLA_U32;
			policy[i].maxlen = sizeof(uint32_t);
			break;
		case MFR_ATTR_UINT:
			policy[i].minlen = sizeof(uint32_t);
			policy[i].maxlen = sizeof(uint64_t);
			break;
		case MFR_ATTR_STRING:
			policy[i].type = NLA_STRING;
			break;
		case MFR_ATTR_NEST:
			policy[i].type = NLA_NESTED;
			break;
		case MFR_ATTR_UNUSED:
			break;
		}
	}
	ret = genlmsg_parse(nlh, 0, tb, set->max, policy);
	if (ret < 0) {
		snprintf(r->g->err.msg, sizeof(r->g->err.msg),
			 "malformed %s message from the kernel: %s",
			 mfr_cmd_name(cmd) ?: "mfr", nl_geterror(ret));
		r->g->err.errnum = EBADMSG;
		return -EBADMSG;
	}
	return r->cb ? r->cb(cmd, set, tb, r->arg) : 0;
}

static int valid_cb(struct nl_msg *msg, void *arg)
{
	struct request *r = arg;
	struct nl_msg **kept;
	int ret;

	/* Replies past a failure or a stop are read, not delivered. */
	if (r->error || r->stopped)
		return NL_SKIP;
	if (r->keep) {
		if (r->nkept == r->kept_size) {
			r->kept_size = r->kept_size ? 2 * r->kept_size : 64;
			kept = realloc(r->kept, r->kept_size * sizeof(*kept));
			if (!kept) {
				r->error = fail(r->g, ENOMEM, "");
				return NL_SKIP;
			}
			r->kept = kept;
		}
		nlmsg_get(msg);
		r->kept[r->nkept++] = msg;
		return NL_OK;
	}
	ret = deliver(r, msg);
	if (ret < 0)
		r->error = ret;
	else if (ret > 0)
		r->stopped = true;
	/*
	 * A request is read up to its ACK or end of dump, so that the next
	 * one does not find its leftovers; events have no end to wait for.
	 */
	return r->stopped && !r->req ? NL_STOP : NL_OK;
}

static int any_seq(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_OK;
}

static struct nl_cb *request_callbacks(struct request *r)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);

	if (!cb)
		return NULL;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, r);
	nl_cb_set(cb, NL_CB_DUMP_INTR, NL_CB_CUSTOM, dump_intr_cb, r);
	nl_cb_err(cb, NL_CB_CUSTOM, error_cb, r);
	return cb;
}

/* Send r->req and read until the kernel's ACK, error or end of dump. */
static int transact(struct request *r)
{
	struct mfr_genl *g = r->g;
	struct nl_cb *cb;
	int ret;

	if (g->subscribed)
		return fail(g, EINVAL, "request on an events listener");
	cb = request_callbacks(r);
	if (!cb)
		return fail(g, ENOMEM, "");
	ret = nl_send_auto(g->sk, r->req);
	if (ret < 0) {
		nl_cb_put(cb);
		return libnl_error(g, ret);
	}
	while (!r->done) {
		ret = nl_recvmsgs(g->sk, cb);
		if (ret < 0) {
			/* after error_cb, libnl reports the errno again */
			if (!r->error)
				r->error = libnl_error(g, ret);
			break;
		}
	}
	nl_cb_put(cb);
	return r->error;
}

int mfr_genl_do(struct mfr_genl *g, struct nl_msg *req, mfr_genl_cb cb,
		void *arg)
{
	struct request r = {
		.g = g,
		.req = req,
		.cb = cb,
		.arg = arg,
		.set = mfr_cmd_attr_set(genlmsg_hdr(nlmsg_hdr(req))->cmd),
	};

	clear_error(g);
	return transact(&r);
}

static void drop_kept(struct request *r)
{
	while (r->nkept)
		nlmsg_free(r->kept[--r->nkept]);
}

int mfr_genl_dump(struct mfr_genl *g, uint8_t cmd, mfr_genl_cb cb, void *arg)
{
	struct request r = {
		.g = g,
		.set = mfr_cmd_attr_set(cmd),
		.cb = cb,
		.arg = arg,
		.keep = true,
	};
	int tries, ret = 0;
	size_t i;

	for (tries = 0; tries < DUMP_TRIES; tries++) {
		clear_error(g);
		r.done = r.interrupted = r.stopped = false;
		r.error = 0;
		r.req = mfr_genl_request(g, cmd);
		if (!r.req) {
			ret = fail(g, ENOMEM, "");
			break;
		}
		nlmsg_hdr(r.req)->nlmsg_flags |= NLM_F_DUMP;
		ret = transact(&r);
		nlmsg_free(r.req);
		r.req = NULL;
		if (ret < 0)
			break;
		if (!r.interrupted) {
			/* A consistent snapshot: now the caller sees it. */
			for (i = 0; i < r.nkept && !ret; i++)
				ret = deliver(&r, r.kept[i]);
			ret = ret > 0 ? 0 : ret;
			break;
		}
		drop_kept(&r);
	}
	if (tries == DUMP_TRIES)
		ret = fail(g, EAGAIN,
			   "the state kept changing during the dump");
	drop_kept(&r);
	free(r.kept);
	return ret;
}

int mfr_genl_subscribe(struct mfr_genl *g)
{
	int fd = nl_socket_get_fd(g->sk);
	int size = EVENTS_RCVBUF;
	int grp, ret;

	clear_error(g);
	grp = genl_ctrl_resolve_grp(g->sk, MFR_FAMILY_NAME, MFR_MCGRP_EVENTS);
	if (grp == -NLE_OBJ_NOTFOUND)
		return fail(g, MFR_GENL_ENOGROUP, "");
	if (grp < 0)
		return libnl_error(g, grp);

	/*
	 * Past the rmem_max limit only with CAP_NET_ADMIN; without, the
	 * kernel caps the plain request at rmem_max.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size))) {
		ret = nl_socket_set_buffer_size(g->sk, size, 0);
		if (ret < 0)
			return libnl_error(g, ret);
	}
	ret = nl_socket_add_membership(g->sk, grp);
	if (ret < 0)
		return libnl_error(g, ret);
	ret = nl_socket_set_nonblocking(g->sk);
	if (ret < 0)
		return libnl_error(g, ret);
	g->subscribed = true;
	return 0;
}

int mfr_genl_recv_events(struct mfr_genl *g, mfr_genl_cb cb, void *arg)
{
	struct request r = { .g = g, .cb = cb, .arg = arg };
	struct nl_cb *ncb;
	int ret;

	clear_error(g);
	ncb = request_callbacks(&r);
	if (!ncb)
		return fail(g, ENOMEM, "");
	/* Events are not answers to requests: no sequence to check. */
	nl_cb_set(ncb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, any_seq, NULL);
	ret = nl_recvmsgs_report(g->sk, ncb);
	nl_cb_put(ncb);
	/* recvmsg() failing with ENOBUFS is what libnl calls NLE_NOMEM */
	if (ret == -NLE_NOMEM)
		return fail(g, MFR_GENL_EOVERRUN, "");
	if (ret < 0 && !r.error)
		return libnl_error(g, ret);
	return r.error;
}

/* Whether an extack message starts by naming attr ("id: no such rule"). */
static bool names_attr(const char *msg, const char *attr)
{
	size_t len = strlen(attr);

	return !strncmp(msg, attr, len) && msg[len] == ':';
}

bool mfr_genl_print_error(FILE *f, const struct mfr_genl *g, int err)
{
	const struct mfr_genl_error *e = g ? mfr_genl_last_error(g) : NULL;

	fputs(mfr_genl_strerror(err), f);
	if (!e || e->errnum != -err)
		return false;
	if (e->msg[0])
		fprintf(f, ": %s", e->msg);
	if (e->attr && !names_attr(e->msg, e->attr))
		fprintf(f, e->msg[0] ? " (%sattribute %s)" : ": %sattribute %s",
			e->attr_missing ? "missing " : "", e->attr);
	return !e->msg[0] && !e->attr;
}
