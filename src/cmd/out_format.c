/*
 * --output-format of the commands that read files (join, merge,
 * compare): kv, json, human, or auto, the table on a terminal.
 */
#include <string.h>
#include <unistd.h>

#include "cmd/run.h"

int file_cmd_format(const char *f, int *json, int *human)
{
	if (!strcmp(f, "auto")) {
		*json = 0;
		*human = isatty(STDOUT_FILENO);
		return 0;
	}
	*json = !strcmp(f, "json");
	*human = !strcmp(f, "human");
	return !*json && !*human && strcmp(f, "kv") ? -1 : 0;
}
