/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Miniflow extract on every packet of the capture corpus (SP_CORPUS_DIR,
 * tests/corpus/tcpdump): every variant against scalar, each packet's bytes
 * ending at an inaccessible page. Skipped (exit status 77), saying so,
 * when the corpus is absent.
 */
#include <dirent.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfexcheck.h"

static unsigned
check_file(const char *path)
{
    char errbuf[PCAP_ERRBUF_SIZE];
    struct pcap_pkthdr *hdr;
    const u_char *data;
    pcap_t *pcap = pcap_open_offline(path, errbuf);
    unsigned count = 0;

    if (!pcap) {
        return 0; /* not a capture (the licence file) */
    }
    while (pcap_next_ex(pcap, &hdr, &data) == 1) {
        uint32_t len = hdr->caplen < SP_MFEXCHECK_LEN_MAX
                           ? hdr->caplen
                           : SP_MFEXCHECK_LEN_MAX;

        sp_mfexcheck_add(data, len);
        count++;
    }
    pcap_close(pcap);
    return count;
}

static struct dirent **names;
static int n_names;

static void
test_corpus(void **state)
{
    (void)state;
    const char *dir = getenv("SP_CORPUS_DIR");
    unsigned files = 0, packets = 0;

    sp_mfexcheck_init();
    for (int i = 0; i < n_names; i++) {
        char path[4096];

        if (names[i]->d_name[0] != '.') {
            unsigned got;

            snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
            got = check_file(path);
            files += got > 0;
            packets += got;
        }
        free(names[i]);
    }
    free(names);
    sp_mfexcheck_flush();
    sp_mfexcheck_fini();
    printf("mfex corpus: %u packets of %u captures, every variant\n", packets,
           files);
    assert_true(packets > 0);
}

int
main(void)
{
    const char *dir = getenv("SP_CORPUS_DIR");

    /* cmocka counts its own skip() as a pass: meson's skip is status 77. */
    if (!dir || (n_names = scandir(dir, &names, NULL, alphasort)) < 0) {
        printf("SKIP: no capture corpus at '%s' (SP_CORPUS_DIR)\n",
               dir ? dir : "");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
    };

    return cmocka_run_group_tests_name("mfex_corpus", tests, NULL, NULL);
}
