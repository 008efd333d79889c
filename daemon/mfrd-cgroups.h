// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The cgroups behind the rules' cgroup paths.  mfr.ko resolves a path to
 * a cgroup id when the rules are pushed; a cgroup removed and created
 * again (a VM's scope, a restarted slice) gets a new id that the module's
 * rule no longer matches.  mfrd keeps the ids it pushed against and looks
 * again on its tick: any change means "push the rules again".
 */
#ifndef MFRD_CGROUPS_H
#define MFRD_CGROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "mfrd-config.h"

/*
 * ids[i]: the id (inode number: cgroup v2 ids are the directory's) of
 * rule i's cgroup path under root, 0 if the rule has none or it does
 * not exist.  ids has room for rules->n.
 */
void mfrd_cgroup_ids_read(const char *root, const struct mfrd_rules *rules,
			  uint64_t *ids);

/*
 * The first rule whose cgroup is not the one in ids (recreated, removed
 * or created since), or -1 if none; *now gets its id now.
 */
long mfrd_cgroup_ids_changed(const char *root, const struct mfrd_rules *rules,
			     const uint64_t *ids, uint64_t *now);

#endif /* MFRD_CGROUPS_H */
