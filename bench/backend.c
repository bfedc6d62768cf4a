/* The canned-response backend of the proxy rows (bench/gateway_rows.py).
 * One epoll loop on one port answers every complete request head
 * ("\r\n\r\n") with a fixed response: a body of SMALL bytes when the
 * request line names a path with "small" in it, of LARGE bytes otherwise.
 * Connections stay open (the proxies keep them in their upstream pool)
 * unless the request says "Connection: close".
 *
 * Unlike bench/floor.c (the probe that is measured), this one is the load
 * side's: it runs on the load generator's CPU and must never answer short,
 * so a write the socket takes only in part is finished after poll(), not
 * dropped (a 123,784-byte answer may exceed the socket's send buffer).
 *
 * usage: backend PORT SMALL_BYTES LARGE_BYTES
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 512
#define BUF 16384

struct canned { char *bytes; int len; };

static struct canned make(int body) {
    struct canned c = { malloc(body + 256), 0 };
    int head = sprintf(c.bytes, "HTTP/1.1 200 OK\r\nServer: backend\r\nContent-Type: text/html\r\n"
                                "Content-Length: %d\r\nConnection: keep-alive\r\n\r\n", body);
    memset(c.bytes + head, 'x', body);
    c.len = head + body;
    return c;
}

/* The whole response or -1: waits for room when the socket is full. */
static int write_all(int fd, const char *p, int len) {
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w > 0) { p += w; len -= w; continue; }
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            if (poll(&pf, 1, 10000) <= 0) return -1;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: backend PORT SMALL_BYTES LARGE_BYTES\n"); return 2; }
    int port = atoi(argv[1]);
    struct canned small = make(atoi(argv[2])), large = make(atoi(argv[3]));

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (bind(ls, (void *)&a, sizeof a) || listen(ls, 4096)) { perror("bind"); return 1; }
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = ls }, evs[MAX_EVENTS];
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    static char buf[BUF];
    for (;;) {
        int n = epoll_wait(ep, evs, MAX_EVENTS, -1);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            if (fd == ls) {
                int c;
                while ((c = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event ce = { .events = EPOLLIN, .data.fd = c };
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
                }
                continue;
            }
            ssize_t r = read(fd, buf, sizeof buf - 1);
            if (r <= 0) { close(fd); continue; }
            buf[r] = 0;
            int close_after = strcasestr(buf, "Connection: close") != NULL, failed = 0;
            for (char *p = buf, *end; !failed && (end = strstr(p, "\r\n\r\n")) != NULL; p = end + 4) {
                char *line_end = strstr(p, "\r\n");
                *line_end = 0;
                const struct canned *c = strstr(p, "small") ? &small : &large;
                failed = write_all(fd, c->bytes, c->len) < 0;
            }
            if (close_after || failed) close(fd);
        }
    }
}
