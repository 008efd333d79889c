// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The mfr netlink contract (module/mfr.yaml) as C tables: for each
 * attribute set, the name and wire type of every attribute and the names
 * of enum values, and for each command its name and attribute set.  The
 * tables are generated from the spec (mfr-spec-gen.[ch], "make
 * ynl-regen"; a host test fails when they are stale), so JSON output and
 * error messages use the same words as the spec and the YNL CLI.
 */
#ifndef MFR_SPEC_H
#define MFR_SPEC_H

#include <stdint.h>
#include <linux/mfr.h>

enum mfr_attr_type {
	MFR_ATTR_UNUSED,	/* a hole in the attribute numbering */
	MFR_ATTR_U32,
	MFR_ATTR_UINT,		/* YNL "uint": 4 or 8 bytes on the wire */
	MFR_ATTR_STRING,
	MFR_ATTR_NEST,		/* attributes of another set, see nested */
};

struct mfr_enum {
	const char *const *names;	/* indexed by value */
	unsigned int count;
};

struct mfr_attr {
	const char *name;
	enum mfr_attr_type type;
	const struct mfr_enum *values;	/* NULL unless the u32 is an enum */
	const struct mfr_attr_set *nested;	/* MFR_ATTR_NEST only */
};

struct mfr_attr_set {
	const char *name;
	unsigned int max;		/* highest attribute type */
	const struct mfr_attr *attrs;	/* max + 1 entries, [0] unused */
};

/* A command: its spec name, attribute set, and for notifications the kind. */
struct mfr_cmd {
	const char *name;
	unsigned int set;	/* enum mfr_set_id */
	const char *event;	/* "page-poisoned" for page-poisoned-ntf */
};

/* The tables themselves, generated from the spec by "make ynl-regen". */
#include "mfr-spec-gen.h"

extern const struct mfr_attr_set mfr_attr_sets[MFR_SET_COUNT];
extern const struct mfr_cmd mfr_cmds[MFR_CMD_MAX + 1];

/* The attribute set of a command's messages, NULL for an unknown command. */
const struct mfr_attr_set *mfr_cmd_attr_set(uint8_t cmd);

/* The spec's name of a command ("rule-add"), NULL if unknown. */
const char *mfr_cmd_name(uint8_t cmd);

/*
 * The kind of a notification: its command name without "-ntf"
 * ("page-poisoned"), NULL if cmd is not a notification.
 */
const char *mfr_event_name(uint8_t cmd);

/* An enum value's name, NULL if the value is out of range. */
const char *mfr_enum_name(const struct mfr_enum *e, uint64_t value);

/* The value of an enum name, or -1 if there is no such name. */
int mfr_enum_value(const struct mfr_enum *e, const char *name);

/* The name of attribute attr of set, NULL if there is none. */
const char *mfr_attr_name(const struct mfr_attr_set *set, unsigned int attr);

#endif /* MFR_SPEC_H */
