#define _GNU_SOURCE
#include "landlock_shim.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

int ingestd_landlock_abi(void) {
    return (int)syscall(__NR_landlock_create_ruleset, NULL, 0, 1U /* LANDLOCK_CREATE_RULESET_VERSION */);
}

int ingestd_landlock_create(uint64_t handled_fs, uint64_t handled_net) {
    struct ruleset_attr attr = { handled_fs, handled_net, 0 };
    // Older kernels take the shorter structure; the longer one only if its tail is zero.
    size_t size = handled_net ? 16 : 8;
    return (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0U);
}

int ingestd_landlock_allow(int ruleset, const char *path, uint64_t rights) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return -1;
    struct path_beneath_attr attr = { rights, fd };
    int result = (int)syscall(__NR_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &attr, 0U);
    int saved = errno;
    close(fd);
    errno = saved;
    return result;
}

int ingestd_landlock_restrict(int ruleset) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return (int)syscall(__NR_landlock_restrict_self, ruleset, 0U);
}
