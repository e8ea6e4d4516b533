// Landlock (Linux 5.13+) for job processes: the three system calls behind small functions, since
// Swift cannot call the variadic syscall(2). Structures are declared here rather than taken from
// <linux/landlock.h>, whose fields depend on the kernel headers' version.
#ifndef INGESTD_LANDLOCK_SHIM_H
#define INGESTD_LANDLOCK_SHIM_H
#include <stdint.h>

/// The Landlock ABI version the kernel speaks, or -1 (errno set) when it has none.
int ingestd_landlock_abi(void);
/// A ruleset that handles these file-system and network rights; its descriptor, or -1.
int ingestd_landlock_create(uint64_t handled_fs, uint64_t handled_net);
/// Allows `rights` beneath `path` (a directory; for a file, file rights only); 0, or -1.
int ingestd_landlock_allow(int ruleset, const char *path, uint64_t rights);
/// Sets no_new_privs and confines this process (and its future children) to the ruleset; 0, or -1.
int ingestd_landlock_restrict(int ruleset);

#endif
