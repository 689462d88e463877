// libmicrohttpd for PriceHTTP.
// Why a shim: MHD_start_daemon, MHD_get_connection_info and MHD_get_daemon_info are C variadic
// functions, which Swift cannot call. Each is wrapped here in a fixed-argument static inline function
// with the options pricesvc uses, so the option list is checked by the C compiler in one place.
#ifndef CMICROHTTPD_SHIM_H
#define CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// MHD_Result and friends are closed C enums; named constants keep the Swift side independent of how the
/// importer spells its cases.
static const enum MHD_Result CMHD_YES = MHD_YES;
static const enum MHD_Result CMHD_NO = MHD_NO;
static const enum MHD_ValueKind CMHD_HEADER_KIND = MHD_HEADER_KIND;
static const enum MHD_ValueKind CMHD_GET_ARGUMENT_KIND = MHD_GET_ARGUMENT_KIND;
static const enum MHD_ResponseMemoryMode CMHD_RESPMEM_MUST_COPY = MHD_RESPMEM_MUST_COPY;

static const enum MHD_ConnectionNotificationCode CMHD_CONNECTION_NOTIFY_STARTED = MHD_CONNECTION_NOTIFY_STARTED;

/// Starts a daemon bound to `addr` with `pool_size` event-loop threads.
/// accept_policy: asked for every new connection (pricesvc's per-network connection limit, which
/// replaces libmicrohttpd's per-address one); notify_connection: connection opened and closed;
/// memory_limit: per-connection buffer for headers (and the read buffer);
/// timeout_seconds: idle connection timeout; stack_size: per event-loop thread.
static inline struct MHD_Daemon *cmhd_start_daemon(
    unsigned int flags, const struct sockaddr *addr,
    MHD_AcceptPolicyCallback accept_policy, void *accept_policy_cls,
    MHD_AccessHandlerCallback handler, void *handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls,
    unsigned int connection_limit,
    unsigned int timeout_seconds, size_t memory_limit, size_t stack_size,
    unsigned int backlog, unsigned int pool_size)
{
    return MHD_start_daemon(flags, 0, accept_policy, accept_policy_cls, handler, handler_cls,
        MHD_OPTION_SOCK_ADDR, addr,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_THREAD_STACK_SIZE, stack_size,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, backlog,
        MHD_OPTION_THREAD_POOL_SIZE, pool_size,
        MHD_OPTION_END);
}

/// Writes a socket address as text into buf; returns 0 on success.
static inline int cmhd_address_text(const struct sockaddr *sa, char *buf, size_t len)
{
    if (sa == NULL) return -1;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)sa;
        return inet_ntop(AF_INET, &in4->sin_addr, buf, (socklen_t)len) ? 0 : -1;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        return inet_ntop(AF_INET6, &in6->sin6_addr, buf, (socklen_t)len) ? 0 : -1;
    }
    return -1;
}

/// Writes the peer's address as text into buf; returns 0 on success.
static inline int cmhd_client_ip(struct MHD_Connection *connection, char *buf, size_t len)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL) return -1;
    return cmhd_address_text(info->client_addr, buf, len);
}

/// The connection's socket, or -1.
static inline int cmhd_connection_socket(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/// What the connection notification stored for this connection (NULL if nothing).
static inline void *cmhd_socket_context(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/// The port the daemon listens on (useful when asked for port 0), or 0.
static inline uint16_t cmhd_bound_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// Fills an IPv4/IPv6 socket address from text; returns the family or -1.
static inline int cmhd_make_sockaddr(const char *host, uint16_t port, struct sockaddr_storage *out)
{
    memset(out, 0, sizeof(*out));
    struct sockaddr_in *in4 = (struct sockaddr_in *)out;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        return AF_INET;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        return AF_INET6;
    }
    return -1;
}

#endif
