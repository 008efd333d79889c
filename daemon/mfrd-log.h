// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd's log: journal entries with a stable MESSAGE_ID per kind and
 * structured MFR_* fields (catalog in mfrd.catalog), or plain stderr
 * lines where no journald listens (a test VM without systemd).
 */
#ifndef MFRD_LOG_H
#define MFRD_LOG_H

#include <syslog.h>

/* One per kind of entry; never change one that has shipped. */
#define MFRD_MSGID_MEMFD_KEPT		"6e49105e051b4eba9c80c48617c620cf"
#define MFRD_MSGID_MEMFD_EVICTED	"acfd4f1892b44e10a3dcf0101aa03d7a"
#define MFRD_MSGID_PAGE_POISONED	"eb5269e54a5a4debadd6ea2bba88f801"
#define MFRD_MSGID_PAGE_CONSUMED	"46ffc58993a54cce8ee11141578ff82d"
#define MFRD_MSGID_BUDGET_EXCEEDED	"1ef403f47f854f3e9dacb5bb55bd2897"
#define MFRD_MSGID_PAGE_UNTRACKED	"6f5f646da255410badb735e5e502b0b5"
#define MFRD_MSGID_FOLIO_PENDING	"d7800a9fce844c7bb16105f91d12d17e"
#define MFRD_MSGID_FOLIO_OFFLINED	"be1343cc34614c06863e97f641dd71d6"
#define MFRD_MSGID_RECORDED_OFFLINED	"d9463ef76f3d458c937ec83dd6fb5712"
#define MFRD_MSGID_CONFIG_REJECTED	"cda346a082d94325996172d99f99455d"
#define MFRD_MSGID_MODULE_STATE		"9500ecc826c24b2eb0a4233b304989a5"
#define MFRD_MSGID_EVENTS_LOST		"692a0f373f854c89adca72c966ad1aee"
#define MFRD_MSGID_STORE_RECOVERED	"874cfb8201154fb4971441c2bc3f5038"
#define MFRD_MSGID_STORE_ERROR		"ae4fc88c0c2d485a9e80900e34bca1ab"
#define MFRD_MSGID_SUPPRESSED		"52b5a9ad651b4ccfbc300e74648a858d"
#define MFRD_MSGID_READY_UNPROTECTED	"6c31473149c2464ca9447f9d032d5a6a"
/* Logged by mfrctl forget, not by mfrd. */
#define MFRD_MSGID_FORGOTTEN		"49d41c6281304526b50860bd66dbbaa2"

struct mfrd_log;

/* Decide once where entries go: journald if its socket exists. */
void mfrd_log_open(void);

/*
 * Build an entry: priority (LOG_*), MESSAGE_ID (NULL: none), fields,
 * then the MESSAGE.  Out of memory aborts: a daemon that cannot log
 * is restarted by systemd.
 */
struct mfrd_log *mfrd_log_new(int priority, const char *message_id);
void mfrd_log_field(struct mfrd_log *l, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void mfrd_log_message(struct mfrd_log *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The MESSAGE set so far ("" if none). */
const char *mfrd_log_text(const struct mfrd_log *l);

/* Send the entry now and free it. */
void mfrd_log_send(struct mfrd_log *l);

/*
 * Hold the entry until mfrd_log_flush(): events are logged only once
 * their records are committed to the store.
 */
void mfrd_log_defer(struct mfrd_log *l);
void mfrd_log_flush(void);
/* Drop the held entries: their records were rolled back. */
void mfrd_log_discard(void);

/*
 * Rate limit per kind of entry: at most burst entries of one kind in
 * interval_usec; the rest are counted, and when the interval ends one
 * summary entry (MFRD_MSGID_SUPPRESSED) says how many of that kind were
 * not logged.  burst 0: no limit.  The store keeps every record anyway.
 */
void mfrd_log_set_ratelimit(unsigned int burst, uint64_t interval_usec);
/* Subject l to the limit of its kind ("page-poisoned"). */
void mfrd_log_kind(struct mfrd_log *l, const char *kind);
/* Send the summaries of intervals that ended (call now and then). */
void mfrd_log_ratelimit_tick(void);
/* Entries not logged by the rate limit, since the start. */
uint64_t mfrd_log_suppressed_total(void);
/* The clock of the rate limit (CLOCK_MONOTONIC usec); for unit tests. */
void mfrd_log_set_clock(uint64_t (*now_usec)(void));

/* A message without fields. */
void mfrd_logf(int priority, const char *message_id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* MFRD_LOG_H */
