/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the text files an operator writes (simdpath/textfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simdpath/textfile.h"

FILE *
sp_text_open(const char *path, const char *what, struct sp_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    const char *why = NULL;
    struct stat st;
    FILE *f = NULL;

    if (fd < 0 || fstat(fd, &st)) {
        why = strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        why = S_ISDIR(st.st_mode) ? "a directory, not a file"
                                  : "not a regular file";
    } else if (!(f = fdopen(fd, "r"))) {
        why = strerror(errno);
    }
    if (why) {
        sp_err_set(err, "%s: cannot read %s: %s", path, what, why);
        if (fd >= 0) {
            close(fd);
        }
    }
    return f;
}

long
sp_text_read_line(FILE *f, char *buf, long max)
{
    long len = 0;
    int c = getc(f);

    if (c == EOF) {
        return -1;
    }
    for (; c != EOF && c != '\n' && c != '\r'; c = getc(f)) {
        if (len == max) {
            return -2;
        }
        buf[len++] = (char)c;
    }
    if (c == '\r' && (c = getc(f)) != '\n' && c != EOF) {
        ungetc(c, f);
    }
    buf[len] = '\0';
    return len;
}
