// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The store's failures, handled in one place (mfrd-store-supervisor.h):
 * where records go when the file cannot take them, the incident that
 * says so until an operator acknowledges it, the retries of the file,
 * and the merge back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mfrd-clock.h"
#include "mfrd-log.h"
#include "mfrd-runtime-dir.h"
#include "mfrd-store-recover.h"
#include "mfrd-store-supervisor.h"

/* Retries of a store file that cannot be used: 1 s doubling to 30 s. */
#define RETRY_MIN_USEC	1000000ULL
#define RETRY_MAX_USEC	(30 * 1000000ULL)
#define STANDIN_BESIDE	"mfrd-standin.db"
/*
 * Room kept on the store's disk: a full disk there gives it back to the
 * store, so that the records of a boot stay in the file (a stand-in in
 * /run would not outlive a reboot).  Thousands of page records.
 */
#define RESERVE		"mfrd-reserve"
#define RESERVE_BYTES	(1 << 20)

struct mfrd_store_sup {
	sd_event *event;
	struct mfrd_sup_ops ops;
	char *boot_id;
	char *path;			/* STATE_DIR/mfrd.db */
	char *reserve;			/* STATE_DIR/mfrd-reserve */
	/* The stand-in files, best first (NULL-terminated). */
	char *standins[MFRD_SUP_MEMORY - MFRD_SUP_BESIDE + 1];
	struct mfrd_store *store;	/* in use */
	enum mfrd_sup_where where;	/* ... which one it is */
	bool locked;			/* the file failed as locked */
	/* How the file failed: the incident, kept until acknowledged. */
	enum mfrd_store_fault fault;
	char fault_error[256];
	char *moved_to;
	int64_t copied;
	bool incident_due;		/* ... to be written with the next write */
	sd_event_source *retry_src;
	uint64_t retry_usec;
	uint64_t errors;
	char last_error[256];
};

static int64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static const char *where_text(const struct mfrd_store_sup *sup)
{
	const char *standin = mfrd_sup_standin_path(sup);

	if (standin)
		return standin;
	return sup->where == MFRD_SUP_MEMORY ? "memory only" : sup->path;
}

/*
 * The runtime directory's stand-in is named after the store's path, so
 * that it is only ever merged into the store it stood in for (several
 * mfrd configurations share /run/mfrd in tests).  FNV-1a: a name, not a
 * secret.
 */
static char *runtime_standin(const char *store_path)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char name[64];

	for (const char *c = store_path; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	snprintf(name, sizeof(name), "store-standin-%016" PRIx64 ".db", h);
	return mfrd_runtime_path(name);
}

void mfrd_sup_failed(struct mfrd_store_sup *sup, const char *what)
{
	sup->errors++;
	if (!strcmp(sup->last_error, what))
		return;
	snprintf(sup->last_error, sizeof(sup->last_error), "%s", what);
	mfrd_logf(LOG_ERR, MFRD_MSGID_STORE_ERROR, "store error: %s", what);
}

/* The file as it failed, recorded until an operator acknowledges it. */
static void remember_incident(struct mfrd_store_sup *sup,
			      enum mfrd_store_fault fault, const char *error,
			      const char *moved_to, int64_t copied)
{
	sup->fault = fault;
	snprintf(sup->fault_error, sizeof(sup->fault_error), "%s", error ?: "");
	free(sup->moved_to);
	sup->moved_to = moved_to ? strdup(moved_to) : NULL;
	sup->copied = copied;
}

/* The incident into the store in use (a stand-in: merged with it). */
static void add_incident(struct mfrd_store_sup *sup)
{
	if (mfrd_store_add_incident(sup->store, now_usec(),
				    mfrd_store_fault_name(sup->fault),
				    sup->fault_error, sup->moved_to,
				    sup->copied))
		mfrd_sup_failed(sup, mfrd_store_error(sup->store));
}

static void log_recovery(struct mfrd_store_sup *sup,
			 const struct mfrd_store_recovery *r)
{
	struct mfrd_log *l = mfrd_log_new(LOG_CRIT, MFRD_MSGID_STORE_RECOVERED);
	const char *standin = mfrd_sup_standin_path(sup);
	char copied[128];

	mfrd_log_field(l, "MFR_STORE", "%s", sup->path);
	mfrd_log_field(l, "MFR_STORE_ERROR", "%s", r->error);
	mfrd_log_field(l, "MFR_STORE_FAULT", "%s",
		       mfrd_store_fault_name(r->fault));
	mfrd_log_field(l, "MFR_STORE_COPIED", "%lld", (long long)r->copied);
	if (r->moved_to)
		mfrd_log_field(l, "MFR_STORE_MOVED_TO", "%s", r->moved_to);
	if (r->copied >= 0)
		snprintf(copied, sizeof(copied), "%lld page records %s",
			 (long long)r->copied, r->in_memory ?
			 "read from it for boot offlining" : "salvaged into it");
	else
		snprintf(copied, sizeof(copied),
			 "no page record could be read from it: the pfns of earlier boots are unknown");
	if (standin)
		mfrd_log_field(l, "MFR_STORE_STANDIN", "%s", standin);
	if (!r->in_memory)
		mfrd_log_message(l, "the store %s is damaged (%s): moved aside to %s, a fresh store started; %s; acknowledge with \"mfrctl store ack\"",
				 sup->path, r->error, r->moved_to, copied);
	else
		mfrd_log_message(l, "the store %s cannot be used (%s: %s)%s%s: %s%s; %s; records are kept in %s%s%s%s and the file is retried until it opens, then they are merged into it; acknowledge with \"mfrctl store ack\"",
				 sup->path, mfrd_store_fault_name(r->fault),
				 r->error, r->move_error ? "; " : "",
				 r->move_error ?: "",
				 r->moved_to ? "it was moved aside to " :
				 "the file is left as it is", r->moved_to ?: "",
				 copied, where_text(sup),
				 r->standin_error ? " (a stand-in file before it failed: " : "",
				 r->standin_error ?: "",
				 r->standin_error ? ")" : "");
	mfrd_log_send(l);
}

/* The stand-in's records are in the store file now: say what. */
static void log_merged(struct mfrd_store_sup *sup,
		       const struct mfrd_store_merged *m, const char *when)
{
	struct mfrd_log *l = mfrd_log_new(LOG_NOTICE,
					  MFRD_MSGID_STORE_RECOVERED);

	mfrd_log_field(l, "MFR_STORE", "%s", sup->path);
	mfrd_log_field(l, "MFR_STORE_MERGED_PAGES", "%lld", (long long)m->pages);
	mfrd_log_field(l, "MFR_STORE_MERGED_EVENTS", "%lld",
		       (long long)m->events);
	mfrd_log_field(l, "MFR_STORE_MERGED_INCIDENTS", "%lld",
		       (long long)m->incidents);
	mfrd_log_message(l, "the records kept while the store %s could not be used (%s) are in it now: %lld page records, %lld events, %lld store incidents",
			 sup->path, when, (long long)m->pages,
			 (long long)m->events, (long long)m->incidents);
	mfrd_log_send(l);
}

/*
 * The reserve, allocated (real blocks, not a sparse file) when the disk
 * has room for it; quietly not, when it has not.
 */
static void keep_reserve(struct mfrd_store_sup *sup)
{
	struct stat st;
	int fd, err;

	if (!stat(sup->reserve, &st) && st.st_blocks * 512 >= RESERVE_BYTES)
		return;
	fd = open(sup->reserve, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return;
	err = posix_fallocate(fd, 0, RESERVE_BYTES);
	close(fd);
	if (err) {
		unlink(sup->reserve);
		mfrd_logf(LOG_DEBUG, NULL, "no reserve of %d KiB beside the store: %s",
			  RESERVE_BYTES >> 10, strerror(err));
	}
}

/*
 * The store's disk is full: its reserve released, the write is tried on
 * the file again.  True if there was one.  Said loudly and kept as an
 * incident: the disk needs room before the next error.
 */
static bool release_reserve(struct mfrd_store_sup *sup)
{
	char error[sizeof(sup->last_error)];
	struct mfrd_log *l;

	if (unlink(sup->reserve))
		return false;
	snprintf(error, sizeof(error), "%s", mfrd_store_error(sup->store));
	l = mfrd_log_new(LOG_CRIT, MFRD_MSGID_STORE_RECOVERED);
	mfrd_log_field(l, "MFR_STORE", "%s", sup->path);
	mfrd_log_field(l, "MFR_STORE_ERROR", "%s", error);
	mfrd_log_field(l, "MFR_STORE_FAULT", "full");
	mfrd_log_message(l, "the disk under the store %s is FULL (%s): mfrd released its reserve of %d KiB there, records go on into the file; make room there before it fills again (then records go to a stand-in, in /run if the disk has no room for it, lost at a reboot unless merged); acknowledge with \"mfrctl store ack\"",
			 sup->path, error, RESERVE_BYTES >> 10);
	mfrd_log_send(l);
	remember_incident(sup, MFRD_STORE_UNAVAILABLE, error, NULL, 0);
	sup->incident_due = true;
	return true;
}

static void changed(struct mfrd_store_sup *sup, bool back_on_file)
{
	if (sup->ops.changed)
		sup->ops.changed(sup->ops.arg, back_on_file);
}

static int on_retry(sd_event_source *src, uint64_t usec, void *arg);

/* The next try at the store file: 1 s, doubling up to 30 s. */
static void schedule_retry(struct mfrd_store_sup *sup)
{
	uint64_t now;

	if (!sup->event || sup->where == MFRD_SUP_FILE)
		return;
	sup->retry_usec = sup->retry_usec ? sup->retry_usec * 2 :
			  RETRY_MIN_USEC;
	if (sup->retry_usec > RETRY_MAX_USEC)
		sup->retry_usec = RETRY_MAX_USEC;
	if (sd_event_now(sup->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	if (sup->retry_src) {
		sd_event_source_set_time(sup->retry_src, now + sup->retry_usec);
		sd_event_source_set_enabled(sup->retry_src, SD_EVENT_ONESHOT);
	} else if (sd_event_add_time(sup->event, &sup->retry_src,
				     CLOCK_MONOTONIC, now + sup->retry_usec, 0,
				     on_retry, sup) < 0) {
		mfrd_logf(LOG_ERR, NULL,
			  "cannot schedule a retry of the store %s: records stay in %s until mfrd restarts",
			  sup->path, where_text(sup));
	}
}

/* Stand-in n's index in standins[], or -1 for memory. */
static int standin_index(enum mfrd_sup_where where)
{
	return where >= MFRD_SUP_BESIDE && where < MFRD_SUP_MEMORY ?
	       (int)(where - MFRD_SUP_BESIDE) : -1;
}

static enum mfrd_sup_where where_of(int used)
{
	return used < 0 ? MFRD_SUP_MEMORY :
	       (enum mfrd_sup_where)(MFRD_SUP_BESIDE + used);
}

/*
 * Stand-in files other than the one in use, that an earlier run left:
 * every record in one place.  One less durable than the one in use (in
 * /run, the one in use beside the store) is merged whole and deleted;
 * from a more durable one, or into memory, only the page records are
 * read (for boot offlining), and the file is kept for a later start.
 */
static void absorb_leftovers(struct mfrd_store_sup *sup)
{
	struct mfrd_store_merged m;
	int in_use = standin_index(sup->where);
	int64_t pages;

	for (int i = 0; sup->standins[i]; i++) {
		if (i == in_use || access(sup->standins[i], F_OK))
			continue;
		if (in_use < 0 || i < in_use) {
			pages = mfrd_store_copy_pages(sup->store,
						      sup->standins[i]);
			mfrd_logf(pages < 0 ? LOG_ERR : LOG_NOTICE,
				  MFRD_MSGID_STORE_RECOVERED,
				  "the stand-in %s an earlier run left is kept for a later start; %lld of its page records read for boot offlining",
				  sup->standins[i], (long long)(pages < 0 ? 0 : pages));
			continue;
		}
		if (mfrd_store_merge_from(sup->store, sup->standins[i], &m)) {
			mfrd_logf(LOG_ERR, MFRD_MSGID_STORE_ERROR,
				  "the stand-in %s an earlier run left cannot be merged into %s (%s): kept for a later start",
				  sup->standins[i], where_text(sup),
				  mfrd_store_error(sup->store));
			sup->errors++;
			continue;
		}
		mfrd_store_remove_standin(sup->standins[i]);
		mfrd_logf(LOG_NOTICE, MFRD_MSGID_STORE_RECOVERED,
			  "the stand-in %s an earlier run left is merged into %s: %lld page records, %lld events, %lld store incidents",
			  sup->standins[i], where_text(sup), (long long)m.pages,
			  (long long)m.events, (long long)m.incidents);
	}
}

/*
 * At start, with the store file usable: the stand-ins an earlier run left
 * (it stopped before the file was usable again) go into it now.  One that
 * cannot be (a disk still too full for it) is run on, the file retried:
 * its records and incident stay in use, and the metrics say so.
 */
static void take_leftovers(struct mfrd_store_sup *sup)
{
	struct mfrd_store_merged m;
	char *err = NULL, *open_err = NULL;
	struct mfrd_store *s;
	int ret;

	for (int i = 0; sup->standins[i]; i++) {
		ret = mfrd_store_take_leftover(sup->standins[i], sup->path,
					       sup->boot_id, &m, &err);
		if (ret > 0)
			log_merged(sup, &m, "an earlier run's stand-in");
		if (ret < 0) {
			sup->errors++;
			if (!mfrd_store_open(sup->standins[i], sup->boot_id, &s,
					     &open_err, NULL)) {
				mfrd_store_close(sup->store);
				sup->store = s;
				sup->where = where_of(i);
			}
			mfrd_logf(LOG_CRIT, MFRD_MSGID_STORE_ERROR,
				  "the stand-in %s an earlier run left cannot be merged into the store %s (%s): %s%s, its records and store incident kept; the merge is retried until it succeeds",
				  sup->standins[i], sup->path, err ?: "?",
				  sup->where == MFRD_SUP_FILE ?
				  "it does not open either, kept for a later start: " :
				  "mfrd runs on it meanwhile",
				  open_err ?: "");
			free(open_err);
			open_err = NULL;
		}
		free(err);
		err = NULL;
		if (sup->where != MFRD_SUP_FILE) {
			absorb_leftovers(sup);
			return;
		}
	}
}

int mfrd_sup_open(struct mfrd_store_sup **supp, const char *state_dir,
		  const char *boot_id, const struct mfrd_sup_ops *ops)
{
	struct mfrd_store_sup *sup = calloc(1, sizeof(*sup));
	struct mfrd_store_recovery r;
	int used;

	if (!sup || !(sup->boot_id = strdup(boot_id)))
		abort();
	if (ops)
		sup->ops = *ops;
	/* systemd's StateDirectory= makes it; by hand, one level is ours. */
	if (mkdir(state_dir, 0700) && errno != EEXIST)
		mfrd_logf(LOG_ERR, NULL, "cannot create %s: %m", state_dir);
	if (asprintf(&sup->path, "%s/mfrd.db", state_dir) < 0 ||
	    asprintf(&sup->standins[0], "%s/" STANDIN_BESIDE, state_dir) < 0 ||
	    asprintf(&sup->reserve, "%s/" RESERVE, state_dir) < 0)
		abort();
	sup->standins[1] = runtime_standin(sup->path);
	/*
	 * The file fails to open for room (SQLite's shared-memory file on a
	 * full disk): the reserve is what that room is for.
	 */
	memset(&r, 0, sizeof(r));
	used = -1;
	if (!mfrd_store_open(sup->path, boot_id, &sup->store, &r.error,
			     &r.fault))
		goto opened;
	if (r.fault == MFRD_STORE_UNAVAILABLE && !unlink(sup->reserve)) {
		mfrd_logf(LOG_CRIT, MFRD_MSGID_STORE_RECOVERED,
			  "the store %s did not open (%s): mfrd released its reserve of %d KiB beside it and tries again; make room there",
			  sup->path, r.error, RESERVE_BYTES >> 10);
		sup->incident_due = true;
		remember_incident(sup, r.fault, r.error, NULL, 0);
	}
	mfrd_store_recovery_free(&r);
	if (mfrd_store_open_or_recover(sup->path,
				       (const char *const *)sup->standins,
				       boot_id, &sup->store, &used, &r)) {
		mfrd_logf(LOG_CRIT, NULL, "cannot open even a store in memory: %s",
			  r.error ?: "out of memory");
		mfrd_store_recovery_free(&r);
		mfrd_sup_close(sup);
		return -1;
	}
opened:
	sup->where = r.in_memory ? where_of(used) : MFRD_SUP_FILE;
	/* Not on the file after all: the start's incident says it. */
	if (sup->where != MFRD_SUP_FILE)
		sup->incident_due = false;
	if (r.fault != MFRD_STORE_OK) {
		sup->errors++;
		sup->locked = r.fault == MFRD_STORE_LOCKED;
		remember_incident(sup, r.fault, r.error, r.moved_to, r.copied);
		log_recovery(sup, &r);
		add_incident(sup);
	}
	mfrd_store_recovery_free(&r);
	if (sup->where == MFRD_SUP_FILE)
		take_leftovers(sup);
	else
		absorb_leftovers(sup);
	if (sup->where == MFRD_SUP_FILE)
		keep_reserve(sup);
	*supp = sup;
	return 0;
}

void mfrd_sup_attach(struct mfrd_store_sup *sup, sd_event *event)
{
	sup->event = event;
	schedule_retry(sup);
}

/*
 * The file failed under a write: its records (pages read read-only) and
 * the incident into the first stand-in that takes them.
 */
static bool leave_file(struct mfrd_store_sup *sup)
{
	enum mfrd_store_fault fault = mfrd_store_fault(sup->store);
	struct mfrd_store_recovery r = { 0 };
	char error[sizeof(sup->last_error)];
	struct mfrd_log *l;
	struct mfrd_store *s;
	int used;

	snprintf(error, sizeof(error), "%s", mfrd_store_error(sup->store));
	if (mfrd_store_open_standin(sup->path,
				    (const char *const *)sup->standins,
				    sup->boot_id, &s, &used, &r)) {
		mfrd_logf(LOG_CRIT, MFRD_MSGID_STORE_ERROR,
			  "the store %s failed (%s) and no stand-in opens (%s)",
			  sup->path, error, r.error ?: "?");
		mfrd_store_recovery_free(&r);
		return false;
	}
	mfrd_store_close(sup->store);
	sup->store = s;
	sup->where = where_of(used);
	sup->locked = fault == MFRD_STORE_LOCKED;
	sup->copied = r.copied;
	l = mfrd_log_new(sup->locked ? LOG_WARNING : LOG_CRIT,
			 sup->locked ? MFRD_MSGID_STORE_ERROR :
			 MFRD_MSGID_STORE_RECOVERED);
	mfrd_log_field(l, "MFR_STORE", "%s", sup->path);
	mfrd_log_field(l, "MFR_STORE_ERROR", "%s", error);
	mfrd_log_field(l, "MFR_STORE_FAULT", "%s", mfrd_store_fault_name(fault));
	if (mfrd_sup_standin_path(sup))
		mfrd_log_field(l, "MFR_STORE_STANDIN", "%s",
			       mfrd_sup_standin_path(sup));
	if (sup->locked) {
		mfrd_log_field(l, "MFR_STORE_LOCKED", "1");
		mfrd_log_message(l, "the store %s is LOCKED by another program (%s; an sqlite3 shell in a transaction?): records are kept aside in %s until it is released, then merged into it; retried in 1 s, then up to every %llu s",
				 sup->path, error, where_text(sup),
				 RETRY_MAX_USEC / 1000000);
	} else {
		mfrd_log_message(l, "the store %s failed while mfrd runs (%s: %s): mfrd goes on, records are kept in %s, the file is retried (1 s, then up to every %llu s) and they are merged into it once it can be written; acknowledge with \"mfrctl store ack\"",
				 sup->path, mfrd_store_fault_name(fault), error,
				 where_text(sup), RETRY_MAX_USEC / 1000000);
		/* A lock is an operator's moment; this is an incident. */
		remember_incident(sup, fault, error, NULL, r.copied);
		add_incident(sup);
	}
	mfrd_log_send(l);
	mfrd_store_recovery_free(&r);
	return true;
}

/* The stand-in in use failed under a write: the next one takes it all. */
static bool next_standin(struct mfrd_store_sup *sup)
{
	const char *from = mfrd_sup_standin_path(sup);
	char error[sizeof(sup->last_error)], *err = NULL;
	enum mfrd_sup_where to = sup->where;
	struct mfrd_store_merged m;
	struct mfrd_store *s = NULL;
	int ret;

	/* Memory is the last: nothing takes over from it. */
	if (!from)
		return false;
	snprintf(error, sizeof(error), "%s", mfrd_store_error(sup->store));
	do {
		to++;
		ret = standin_index(to) >= 0 ?
		      mfrd_store_open(sup->standins[standin_index(to)],
				      sup->boot_id, &s, &err, NULL) :
		      mfrd_store_open(MFRD_STORE_IN_MEMORY, sup->boot_id, &s,
				      &err, NULL);
		free(err);
		err = NULL;
		if (!ret && mfrd_store_merge_from(s, from, &m)) {
			mfrd_store_close(s);
			if (standin_index(to) >= 0)
				mfrd_store_remove_standin(
					sup->standins[standin_index(to)]);
			ret = -1;
		}
	} while (ret && to != MFRD_SUP_MEMORY);
	if (ret) {
		mfrd_logf(LOG_CRIT, MFRD_MSGID_STORE_ERROR,
			  "the stand-in %s failed (%s) and no other opens",
			  from, error);
		return false;
	}
	mfrd_store_close(sup->store);
	mfrd_store_remove_standin(from);
	sup->store = s;
	sup->where = to;
	mfrd_logf(LOG_CRIT, MFRD_MSGID_STORE_RECOVERED,
		  "the stand-in %s failed too (%s): its records are in %s now (%lld page records, %lld events), still waiting for the store %s",
		  from, error, where_text(sup), (long long)m.pages,
		  (long long)m.events, sup->path);
	return true;
}

/* The store in use failed a write: the records go aside, if anywhere. */
static bool put_aside(struct mfrd_store_sup *sup)
{
	bool ok;

	sup->errors++;
	if (sup->where == MFRD_SUP_FILE && mfrd_store_full(sup->store) &&
	    release_reserve(sup))
		return true;	/* the file again, with its room */
	ok = sup->where == MFRD_SUP_FILE ? leave_file(sup) : next_standin(sup);
	if (!ok)
		return false;
	sup->retry_usec = 0;
	schedule_retry(sup);
	changed(sup, false);
	return true;
}

int mfrd_sup_write(struct mfrd_store_sup *sup, mfrd_sup_write_fn fn,
		   void *arg, const char *what)
{
	char error[sizeof(sup->last_error)];

	/* Once per place a record can go, and once more after the reserve. */
	for (int tries = 0; tries <= MFRD_SUP_MEMORY + 1; tries++) {
		if (!mfrd_store_begin(sup->store)) {
			if (!fn(sup->store, arg) &&
			    (!sup->incident_due ||
			     !mfrd_store_add_incident(sup->store, now_usec(),
				mfrd_store_fault_name(sup->fault),
				sup->fault_error, NULL, 0)) &&
			    !mfrd_store_commit(sup->store)) {
				sup->incident_due = false;
				return 0;
			}
			/* Keeps the error: the statement's, not this one's. */
			mfrd_store_rollback_quietly(sup->store);
		}
		mfrd_log_discard();
		if (!put_aside(sup))
			break;
	}
	snprintf(error, sizeof(error), "%s: %s", what,
		 mfrd_store_error(sup->store));
	mfrd_sup_failed(sup, error);
	return -1;
}

/*
 * The file again: open it (a damaged one is moved aside as at start),
 * then merge the stand-in into it.  0 once the file is in use.
 */
static int back_to_file(struct mfrd_store_sup *sup, bool quiet)
{
	struct mfrd_store_recovery r = { 0 };
	struct mfrd_store_merged m;
	struct mfrd_store *s;
	char *err = NULL;
	int used;

	if (mfrd_store_open(sup->path, sup->boot_id, &s, &r.error, &r.fault)) {
		if (r.fault == MFRD_STORE_CORRUPT) {
			mfrd_store_recovery_free(&r);
			if (mfrd_store_open_or_recover(sup->path, NULL,
						       sup->boot_id, &s, &used,
						       &r))
				r.in_memory = true;
			else if (r.in_memory)
				mfrd_store_close(s);
		} else {
			r.in_memory = true;
		}
	}
	if (r.in_memory) {
		sup->locked = r.fault == MFRD_STORE_LOCKED;
		mfrd_logf(LOG_DEBUG, NULL, "the store %s still cannot be used: %s",
			  sup->path, r.error ?: "?");
		mfrd_store_recovery_free(&r);
		return -1;
	}
	if (mfrd_store_leave_standin(sup->store, mfrd_sup_standin_path(sup),
				     sup->path, &m, &err)) {
		if (!quiet)
			mfrd_logf(LOG_WARNING, NULL,
				  "the store %s opens again, but the records kept meanwhile cannot be merged into it (%s): still in %s, retried",
				  sup->path, err, where_text(sup));
		free(err);
		mfrd_store_close(s);
		mfrd_store_recovery_free(&r);
		return -1;
	}
	sup->store = s;
	sup->where = MFRD_SUP_FILE;
	sup->locked = false;
	sup->retry_usec = 0;
	sup->copied = 0;
	keep_reserve(sup);
	if (r.fault != MFRD_STORE_OK) {
		log_recovery(sup, &r);
		remember_incident(sup, r.fault, r.error, r.moved_to, r.copied);
		add_incident(sup);
	}
	mfrd_store_recovery_free(&r);
	log_merged(sup, &m, "merged now");
	return 0;
}

static int on_retry(sd_event_source *src, uint64_t usec, void *arg)
{
	struct mfrd_store_sup *sup = arg;

	(void)src;
	(void)usec;
	if (sup->where == MFRD_SUP_FILE)
		return 0;
	if (back_to_file(sup, false)) {
		schedule_retry(sup);
		return 0;
	}
	mfrd_logf(LOG_NOTICE, MFRD_MSGID_STORE_RECOVERED,
		  "the store %s is in use again: records go to it from now on",
		  sup->path);
	changed(sup, true);
	return 0;
}

void mfrd_sup_close(struct mfrd_store_sup *sup)
{
	if (!sup)
		return;
	/* Whatever the stand-in holds, into the file if it takes it now. */
	if (sup->store && sup->where != MFRD_SUP_FILE && !back_to_file(sup, true))
		mfrd_logf(LOG_NOTICE, MFRD_MSGID_STORE_RECOVERED,
			  "the store %s takes the records kept aside again: merged on stopping",
			  sup->path);
	sd_event_source_disable_unref(sup->retry_src);
	mfrd_store_close(sup->store);
	for (size_t i = 0; sup->standins[i]; i++)
		free(sup->standins[i]);
	free(sup->moved_to);
	free(sup->path);
	free(sup->reserve);
	free(sup->boot_id);
	free(sup);
}

struct mfrd_store *mfrd_sup_store(struct mfrd_store_sup *sup)
{
	return sup->store;
}

enum mfrd_sup_where mfrd_sup_where(const struct mfrd_store_sup *sup)
{
	return sup->where;
}

bool mfrd_sup_locked(const struct mfrd_store_sup *sup)
{
	return sup->where != MFRD_SUP_FILE && sup->locked;
}

const char *mfrd_sup_standin_path(const struct mfrd_store_sup *sup)
{
	int i = standin_index(sup->where);

	return i >= 0 ? sup->standins[i] : NULL;
}

const char *mfrd_sup_path(const struct mfrd_store_sup *sup)
{
	return sup->path;
}

uint64_t mfrd_sup_errors(const struct mfrd_store_sup *sup)
{
	return sup->errors;
}

int64_t mfrd_sup_copied(const struct mfrd_store_sup *sup)
{
	return sup->where == MFRD_SUP_FILE && sup->fault != MFRD_STORE_CORRUPT ?
	       0 : sup->copied;
}
