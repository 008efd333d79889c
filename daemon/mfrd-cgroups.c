// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which cgroup a rule's cgroup path names now (mfrd-cgroups.h).  A stat
 * per cgroup rule, cheap enough for every tick.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "mfrd-cgroups.h"

static uint64_t cgroup_id(const char *root, const char *path)
{
	struct stat st;
	char *full;
	uint64_t id = 0;

	/* Rule paths are absolute within the hierarchy: "/machine.slice". */
	if (asprintf(&full, "%s%s", root, path) < 0)
		abort();
	if (!stat(full, &st) && S_ISDIR(st.st_mode))
		id = (uint64_t)st.st_ino;
	free(full);
	return id;
}

void mfrd_cgroup_ids_read(const char *root, const struct mfrd_rules *rules,
			  uint64_t *ids)
{
	for (size_t i = 0; i < rules->n; i++)
		ids[i] = rules->v[i].cgroup_path ?
			 cgroup_id(root, rules->v[i].cgroup_path) : 0;
}

long mfrd_cgroup_ids_changed(const char *root, const struct mfrd_rules *rules,
			     const uint64_t *ids, uint64_t *now)
{
	for (size_t i = 0; i < rules->n; i++) {
		if (!rules->v[i].cgroup_path)
			continue;
		*now = cgroup_id(root, rules->v[i].cgroup_path);
		if (*now != ids[i])
			return (long)i;
	}
	return -1;
}
