// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-log's rate limit: per kind, at most burst entries per
 * interval; the rest counted and summed up in one entry when the interval
 * ends; other kinds and entries without a kind unaffected.  Entries go to
 * stderr here (no journald), which the test reads back.
 */
#include <stdint.h>
#include <unistd.h>

#include "mfrd-log.h"
#include "unit.h"

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static void entry(const char *kind, int i)
{
	struct mfrd_log *l = mfrd_log_new(LOG_WARNING, NULL);

	mfrd_log_message(l, "%s entry %d", kind ? kind : "plain", i);
	if (kind)
		mfrd_log_kind(l, kind);
	mfrd_log_send(l);
}

/* Lines of the captured stderr that contain needle. */
static int count_lines(const char *path, const char *needle)
{
	char line[1024];
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

int main(void)
{
	char path[4096];
	int saved;

	unit_init();
	snprintf(path, sizeof(path), "%s", unit_path("stderr"));
	saved = dup(STDERR_FILENO);
	if (!freopen(path, "w", stderr))
		return 2;
	mfrd_log_open();
	mfrd_log_set_clock(fake_clock);
	mfrd_log_set_ratelimit(3, 10 * 1000000ULL);

	fake_now = 1000000;
	for (int i = 0; i < 10; i++)
		entry("page-poisoned", i);
	for (int i = 0; i < 2; i++)
		entry("memfd-kept", i);
	for (int i = 0; i < 5; i++)
		entry(NULL, i);
	fake_now += 9 * 1000000;	/* still the same interval */
	mfrd_log_ratelimit_tick();
	entry("page-poisoned", 10);
	fflush(stderr);
	uint64_t suppressed_early = mfrd_log_suppressed_total();
	int poisoned_early = count_lines(path, "page-poisoned entry");
	int summaries_early = count_lines(path, "entries not logged");

	fake_now += 1000000;		/* the interval ends */
	mfrd_log_ratelimit_tick();
	entry("page-poisoned", 11);

	/*
	 * A tenant's memfd name with a newline and a line of its own: one
	 * entry is one line, whatever its text and fields hold.
	 */
	struct mfrd_log *l = mfrd_log_new(LOG_WARNING, NULL);

	mfrd_log_field(l, "MFR_MEMFD", "%s", "x\nmfrd: forged field");
	mfrd_log_message(l, "memfd %s poisoned", "x\nmfrd: forged line");
	mfrd_log_send(l);
	fflush(stderr);

	/* back to the real stderr for the results */
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);

	CHECK(poisoned_early == 3, "3 of 11 page-poisoned entries in one interval logged (%d)",
	      poisoned_early);
	CHECK(suppressed_early == 8, "8 counted as suppressed (%llu)",
	      (unsigned long long)suppressed_early);
	CHECK(summaries_early == 0, "no summary before the interval ends");
	CHECK(count_lines(path, "memfd-kept entry") == 2,
	      "another kind has its own budget: both memfd-kept logged");
	CHECK(count_lines(path, "plain entry") == 5, "entries without a kind: all logged");
	CHECK(count_lines(path, "8 page-poisoned entries not logged (at most 3 per 10 s)") == 1,
	      "one summary when the interval ends");
	CHECK(count_lines(path, "MESSAGE_ID=" MFRD_MSGID_SUPPRESSED) == 1 &&
	      count_lines(path, "MFR_SUPPRESSED=8") == 1,
	      "the summary has its MESSAGE_ID and the count");
	CHECK(count_lines(path, "page-poisoned entry 11") == 1,
	      "the next interval logs again");
	CHECK(mfrd_log_suppressed_total() == 8, "the total stays 8");
	CHECK(count_lines(path, "mfrd: forged") == 1 &&
	      count_lines(path, "memfd x\\x0amfrd: forged line poisoned [MFR_MEMFD=x\\x0amfrd: forged field]") == 1,
	      "a newline in an entry's text or field: \\x0a, one line, nothing forged");

	mfrd_log_set_ratelimit(0, 0);
	return check_exit_status();
}
