// SPDX-License-Identifier: GPL-2.0
/* Parsing of the engine options (-m, -o), kept out of main.c so it stays a thin CLI. */
#include <stdlib.h>
#include <string.h>

#include "scan/scan.h"

int scan_parse_memory(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long mib;

	if (!*s || *s == '-')
		return -1;
	mib = strtoull(s, &end, 10);
	if (*end || mib < 1 || mib > (1ull << 40))
		return -1;
	*bytes = (uint64_t)mib << 20;
	return 0;
}

/* Comma-separated name=value pairs: ag_stride=N. */
int scan_parse_subopts_ex(const char *s, struct scan_opts *o,
			  void (*unknown)(void *priv, const char *subopt), void *priv)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long v;

		if (!eq || strncmp(tok, "ag_stride", (size_t)(eq - tok)) || eq - tok != 9) {
			if (unknown)
				unknown(priv, tok);
			else
				ret = -1;
			continue;
		}
		v = strtoul(eq + 1, &end, 10);
		if (eq[1] && *end == 0 && v >= 1 && v <= UINT32_MAX)
			o->ag_stride = (uint32_t)v;
		else
			ret = -1;
	}
	free(copy);
	return ret;
}

int scan_parse_subopts(const char *s, struct scan_opts *o)
{
	return scan_parse_subopts_ex(s, o, NULL, NULL);
}
