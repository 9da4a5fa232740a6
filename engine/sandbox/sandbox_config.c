/* sandbox_config.c — frees what the CLI and the profile resolution filled in. */
#include "sandbox/sandbox_config.h"

#include <stdlib.h>
#include <string.h>

void sandbox_config_free(struct sandbox_config *cfg)
{
    free(cfg->profile);
    free(cfg->workspace);
    free(cfg->cwd);
    str_list_free(&cfg->writable);
    str_list_free(&cfg->hidden);
    str_list_free(&cfg->readonly_in_workspace);
    str_list_free(&cfg->run_binds);
    str_list_free(&cfg->seccomp_deny);
    str_list_free(&cfg->env);
    memset(cfg, 0, sizeof *cfg);
}

void run_flags_free(struct run_flags *flags)
{
    str_list_free(&flags->writable);
    str_list_free(&flags->hidden);
    str_list_free(&flags->network_allow);
    str_list_free(&flags->network_deny);
}
