/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A test plugin for DPDK's EAL (`-- -d libeal_signal.so`): loaded while
 * rte_eal_init() runs, it sends simdpath the signals SP_TEST_SIGNALS
 * names ("TERM", "TERM,INT"), so that a test delivers them during DPDK's
 * start-up at a known point instead of by timing.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void
send_signals(void)
{
    static const struct {
        const char *name;
        int number;
    } names[] = {{"INT", SIGINT},
                 {"TERM", SIGTERM},
                 {"HUP", SIGHUP},
                 {"QUIT", SIGQUIT}};
    const char *list = getenv("SP_TEST_SIGNALS");

    while (list && *list) {
        size_t len = strcspn(list, ",");

        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            if (strlen(names[i].name) == len &&
                !strncmp(list, names[i].name, len)) {
                kill(getpid(), names[i].number);
            }
        }
        list += len + (list[len] == ',');
    }
}
