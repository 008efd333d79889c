// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Lookups in the tables generated from module/mfr.yaml (mfr-spec-gen.c),
 * indexed by the constants of the generated uAPI header.
 */
#include <stddef.h>
#include <string.h>

#include "mfr-spec.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const struct mfr_cmd *cmd_lookup(uint8_t cmd)
{
	if (cmd >= ARRAY_SIZE(mfr_cmds) || !mfr_cmds[cmd].name)
		return NULL;
	return &mfr_cmds[cmd];
}

const struct mfr_attr_set *mfr_cmd_attr_set(uint8_t cmd)
{
	const struct mfr_cmd *c = cmd_lookup(cmd);

	return c ? &mfr_attr_sets[c->set] : NULL;
}

const char *mfr_cmd_name(uint8_t cmd)
{
	const struct mfr_cmd *c = cmd_lookup(cmd);

	return c ? c->name : NULL;
}

const char *mfr_event_name(uint8_t cmd)
{
	const struct mfr_cmd *c = cmd_lookup(cmd);

	return c ? c->event : NULL;
}

const char *mfr_enum_name(const struct mfr_enum *e, uint64_t value)
{
	return value < e->count ? e->names[value] : NULL;
}

int mfr_enum_value(const struct mfr_enum *e, const char *name)
{
	unsigned int i;

	for (i = 0; i < e->count; i++)
		if (e->names[i] && !strcmp(e->names[i], name))
			return i;
	return -1;
}

const char *mfr_attr_name(const struct mfr_attr_set *set, unsigned int attr)
{
	return attr <= set->max ? set->attrs[attr].name : NULL;
}
