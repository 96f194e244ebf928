#ifndef VOUCH_CMICROHTTPD_SHIM_H
#define VOUCH_CMICROHTTPD_SHIM_H

// GNU libmicrohttpd, the HTTP server under `vouch serve`.
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

// MHD_start_daemon is variadic, which Swift cannot call: the options go in one array
// (MHD_OPTION_ARRAY, ended by MHD_OPTION_END), the listening socket among them.
static inline struct MHD_Daemon *vouch_mhd_start(unsigned int flags, MHD_AccessHandlerCallback handler,
                                                 void *handler_context, struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context, MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

// The port the daemon bound (the one the system chose for port 0), or 0 when unknown.
static inline uint16_t vouch_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

// A response over a copy of `size` bytes at `bytes`.
static inline struct MHD_Response *vouch_mhd_response(const void *bytes, size_t size) {
    return MHD_create_response_from_buffer(size, (void *)bytes, MHD_RESPMEM_MUST_COPY);
}

#ifdef __linux__
#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// Lowers the calling thread's scheduling priority by `steps` nice steps (on Linux a thread has
// a priority of its own; lowering it needs no privilege): 0, or -1 when it cannot.
static inline int vouch_lower_thread_priority(int steps) {
    pid_t thread = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)thread);
    if (errno != 0) return -1;
    return setpriority(PRIO_PROCESS, (id_t)thread, nice + steps > 19 ? 19 : nice + steps);
}
#endif

#endif
