// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Journal entries through sd_journal_sendv(), one iovec per "KEY=value"
 * field.  Without journald the same entry becomes one stderr line, the
 * message followed by its fields in brackets, so tests can still check
 * MESSAGE_IDs and fields.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "mfrd-clock.h"
#include "mfrd-log.h"

#define MAX_FIELDS	40

struct mfrd_log {
	char *fields[MAX_FIELDS];	/* "KEY=value", PRIORITY first */
	unsigned int n;
	char *message;
	const char *kind;		/* rate-limited as this kind, or NULL */
	struct mfrd_log *next;		/* deferred entries */
};

static bool to_journal, to_stderr;
static struct mfrd_log *deferred, **deferred_tail = &deferred;

/* One bucket per kind: kinds are the few event names of the spec. */
#define RATELIMIT_KINDS	16

static struct {
	unsigned int burst;
	uint64_t interval;
	uint64_t total;
	struct {
		const char *kind;
		uint64_t start;		/* of the current interval */
		unsigned int sent;
		uint64_t suppressed;
	} b[RATELIMIT_KINDS];
} rl;

/* The rate limit's clock (tests set another). */
static uint64_t monotonic_usec(void)
{
	return (uint64_t)mfrd_monotonic_usec();
}

static uint64_t (*rl_now)(void) = monotonic_usec;

void mfrd_log_open(void)
{
	to_journal = access("/run/systemd/journal/socket", F_OK) == 0;
	/* Someone started us by hand: show them too. */
	to_stderr = !to_journal || isatty(STDERR_FILENO);
}

static char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

static void add(struct mfrd_log *l, const char *key, const char *fmt,
		va_list ap)
{
	char *value = xvasprintf(fmt, ap);

	/* More fields than MAX_FIELDS is a bug of ours: drop, not crash. */
	if (l->n < MAX_FIELDS &&
	    asprintf(&l->fields[l->n], "%s=%s", key, value) >= 0)
		l->n++;
	free(value);
}

static void add_field(struct mfrd_log *l, const char *key, const char *fmt,
		      ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(l, key, fmt, ap);
	va_end(ap);
}

struct mfrd_log *mfrd_log_new(int priority, const char *message_id)
{
	struct mfrd_log *l = calloc(1, sizeof(*l));

	if (!l)
		abort();
	add_field(l, "PRIORITY", "%d", priority);
	add_field(l, "SYSLOG_IDENTIFIER", "%s", "mfrd");
	if (message_id)
		add_field(l, "MESSAGE_ID", "%s", message_id);
	return l;
}

void mfrd_log_field(struct mfrd_log *l, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add(l, key, fmt, ap);
	va_end(ap);
}

void mfrd_log_message(struct mfrd_log *l, const char *fmt, ...)
{
	va_list ap;

	free(l->message);
	va_start(ap, fmt);
	l->message = xvasprintf(fmt, ap);
	va_end(ap);
}

const char *mfrd_log_text(const struct mfrd_log *l)
{
	return l->message ? l->message : "";
}

static void free_entry(struct mfrd_log *l)
{
	for (unsigned int i = 0; i < l->n; i++)
		free(l->fields[i]);
	free(l->message);
	free(l);
}

/* PRIORITY and SYSLOG_IDENTIFIER say nothing on stderr. */
#define STDERR_SKIP	2

/*
 * One entry, one line: a control character from anywhere (a tenant's
 * memfd name, a file's content) is written as \xNN, so that no text can
 * end a line and forge the next.
 */
static void put_line_text(const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fprintf(stderr, "\\x%02x", (unsigned char)*s);
		else
			putc(*s, stderr);
	}
}

static void write_stderr(const struct mfrd_log *l)
{
	unsigned int i;

	flockfile(stderr);
	fputs("mfrd: ", stderr);
	put_line_text(l->message ? l->message : "");
	for (i = STDERR_SKIP; i < l->n; i++) {
		fputs(i == STDERR_SKIP ? " [" : " ", stderr);
		put_line_text(l->fields[i]);
	}
	fputs(l->n > STDERR_SKIP ? "]\n" : "\n", stderr);
	funlockfile(stderr);
	fflush(stderr);
}

void mfrd_log_set_ratelimit(unsigned int burst, uint64_t interval_usec)
{
	rl.burst = burst;
	rl.interval = interval_usec;
}

void mfrd_log_set_clock(uint64_t (*now_usec)(void))
{
	rl_now = now_usec ?: monotonic_usec;
}

void mfrd_log_kind(struct mfrd_log *l, const char *kind)
{
	l->kind = kind;
}

uint64_t mfrd_log_suppressed_total(void)
{
	return rl.total;
}

static void send_entry(struct mfrd_log *l);

/* The summary of bucket i's interval, if it suppressed anything. */
static void summarize(unsigned int i)
{
	struct mfrd_log *l;

	if (!rl.b[i].suppressed)
		return;
	l = mfrd_log_new(LOG_WARNING, MFRD_MSGID_SUPPRESSED);
	mfrd_log_field(l, "MFR_SUPPRESSED_KIND", "%s", rl.b[i].kind);
	mfrd_log_field(l, "MFR_SUPPRESSED", "%llu",
		       (unsigned long long)rl.b[i].suppressed);
	mfrd_log_field(l, "MFR_RATELIMIT_BURST", "%u", rl.burst);
	mfrd_log_field(l, "MFR_RATELIMIT_INTERVAL_USEC", "%llu",
		       (unsigned long long)rl.interval);
	mfrd_log_message(l, "%llu %s entries not logged (at most %u per %llu s); the store has every record",
			 (unsigned long long)rl.b[i].suppressed, rl.b[i].kind,
			 rl.burst, (unsigned long long)(rl.interval / 1000000));
	rl.b[i].suppressed = 0;
	send_entry(l);
}

void mfrd_log_ratelimit_tick(void)
{
	uint64_t now = rl_now();

	for (unsigned int i = 0; i < RATELIMIT_KINDS && rl.b[i].kind; i++) {
		if (now - rl.b[i].start < rl.interval)
			continue;
		summarize(i);
		rl.b[i].start = now;
		rl.b[i].sent = 0;
	}
}

/* Whether l may go out now; counts it if not. */
static bool ratelimit_allows(const struct mfrd_log *l)
{
	uint64_t now;
	unsigned int i;

	if (!l->kind || !rl.burst)
		return true;
	for (i = 0; i < RATELIMIT_KINDS && rl.b[i].kind; i++)
		if (!strcmp(rl.b[i].kind, l->kind))
			break;
	if (i == RATELIMIT_KINDS)
		return true;	/* more kinds than the spec has: a bug */
	now = rl_now();
	if (!rl.b[i].kind) {
		rl.b[i].kind = l->kind;
		rl.b[i].start = now;
	} else if (now - rl.b[i].start >= rl.interval) {
		summarize(i);
		rl.b[i].start = now;
		rl.b[i].sent = 0;
	}
	if (rl.b[i].sent < rl.burst) {
		rl.b[i].sent++;
		return true;
	}
	rl.b[i].suppressed++;
	rl.total++;
	return false;
}

void mfrd_log_send(struct mfrd_log *l)
{
	if (!ratelimit_allows(l)) {
		free_entry(l);
		return;
	}
	send_entry(l);
}

static void send_entry(struct mfrd_log *l)
{
	struct iovec iov[MAX_FIELDS + 1];
	char *msg = NULL;
	unsigned int i;

	if (to_journal) {
		for (i = 0; i < l->n; i++) {
			iov[i].iov_base = l->fields[i];
			iov[i].iov_len = strlen(l->fields[i]);
		}
		if (asprintf(&msg, "MESSAGE=%s", l->message ?: "") < 0)
			abort();
		iov[i].iov_base = msg;
		iov[i].iov_len = strlen(msg);
		/* journald gone (stopping): stderr still reaches someone */
		if (sd_journal_sendv(iov, (int)i + 1) < 0 && !to_stderr)
			write_stderr(l);
		free(msg);
	}
	if (to_stderr)
		write_stderr(l);
	free_entry(l);
}

void mfrd_log_defer(struct mfrd_log *l)
{
	l->next = NULL;
	*deferred_tail = l;
	deferred_tail = &l->next;
}

void mfrd_log_flush(void)
{
	struct mfrd_log *l, *next;

	for (l = deferred; l; l = next) {
		next = l->next;
		mfrd_log_send(l);
	}
	deferred = NULL;
	deferred_tail = &deferred;
}

void mfrd_log_discard(void)
{
	struct mfrd_log *l, *next;

	for (l = deferred; l; l = next) {
		next = l->next;
		free_entry(l);
	}
	deferred = NULL;
	deferred_tail = &deferred;
}

void mfrd_logf(int priority, const char *message_id, const char *fmt, ...)
{
	struct mfrd_log *l = mfrd_log_new(priority, message_id);
	va_list ap;

	va_start(ap, fmt);
	l->message = xvasprintf(fmt, ap);
	va_end(ap);
	mfrd_log_send(l);
}
