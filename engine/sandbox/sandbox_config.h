/* sandbox_config.h — lifetime of struct sandbox_config and struct run_flags. */
#ifndef CORDON_SANDBOX_CONFIG_H
#define CORDON_SANDBOX_CONFIG_H
#include "sandbox/sandbox-t.h"

void sandbox_config_free(struct sandbox_config *cfg);
void run_flags_free(struct run_flags *flags);
#endif
