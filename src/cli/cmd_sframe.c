/* Placeholder until this command lands. */
#include "cli.h"

int cmd_dump_sframe(const cli_opts *o)
{
	cli_error(o->files[0], "not implemented yet");
	return 1;
}

int cmd_verify(const cli_opts *o)
{
	cli_error(o->files[0], "not implemented yet");
	return 1;
}

