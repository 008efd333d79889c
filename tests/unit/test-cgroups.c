// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd-cgroups.c on a scratch directory standing in for the cgroup root:
 * a cgroup created again under the same path is noticed, and so are one
 * removed and one created after the push.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mfrd-cgroups.h"
#include "unit.h"

int main(void)
{
	char root[4096], dir[4096 + 32], old[4096 + 32];
	struct mfrd_rule v[3] = {
		{ .name_glob = "guest-*", .file = "r", .line = 1 },
		{ .cgroup_path = "/machine.slice/vm1.scope", .file = "r", .line = 4 },
		{ .cgroup_path = "/later.slice", .file = "r", .line = 8 },
	};
	struct mfrd_rules rules = { .v = v, .n = 3 };
	uint64_t ids[3], now = 0;

	unit_init();
	snprintf(root, sizeof(root), "%s", unit_path("cgroup"));
	snprintf(dir, sizeof(dir), "%s/machine.slice", root);
	CHECK(mkdir(root, 0755) == 0 && mkdir(dir, 0755) == 0, "scratch root");
	snprintf(dir, sizeof(dir), "%s/machine.slice/vm1.scope", root);
	CHECK(mkdir(dir, 0755) == 0, "the VM's scope");

	mfrd_cgroup_ids_read(root, &rules, ids);
	CHECK(ids[0] == 0 && ids[1] != 0 && ids[2] == 0,
	      "ids: none for a name rule, the scope's, none for a missing one");
	CHECK(mfrd_cgroup_ids_changed(root, &rules, ids, &now) == -1,
	      "nothing changed");

	/* The VM restarted: a new scope of the same name (the old one still
	 * exists under another name, so its inode cannot be reused). */
	snprintf(old, sizeof(old), "%s/machine.slice/old.scope", root);
	CHECK(rename(dir, old) == 0 && mkdir(dir, 0755) == 0, "scope recreated");
	CHECK(mfrd_cgroup_ids_changed(root, &rules, ids, &now) == 1 &&
	      now != 0 && now != ids[1], "a recreated cgroup is noticed, with its new id");
	mfrd_cgroup_ids_read(root, &rules, ids);
	CHECK(mfrd_cgroup_ids_changed(root, &rules, ids, &now) == -1,
	      "re-read: nothing changed");

	CHECK(rmdir(dir) == 0, "scope removed");
	CHECK(mfrd_cgroup_ids_changed(root, &rules, ids, &now) == 1 && now == 0,
	      "a removed cgroup is noticed");
	CHECK(mkdir(dir, 0755) == 0, "scope back");
	mfrd_cgroup_ids_read(root, &rules, ids);

	snprintf(dir, sizeof(dir), "%s/later.slice", root);
	CHECK(mkdir(dir, 0755) == 0, "a slice created after the push");
	CHECK(mfrd_cgroup_ids_changed(root, &rules, ids, &now) == 2 && now != 0,
	      "a cgroup that appeared is noticed (a refused rule may pass now)");
	return check_exit_status();
}
