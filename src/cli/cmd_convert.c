/* Placeholder until this command lands. */
#include "cli.h"

int cmd_convert(const cli_opts *o)
{
	cli_error(o->files[0], "not implemented yet");
	return 1;
}

