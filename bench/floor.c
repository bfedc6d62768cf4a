/* The floor probe: the kernel's cost of an HTTP exchange with no server work.
 * One epoll loop answers every complete request head ("\r\n\r\n") with a
 * canned response whose body has BODY bytes, keeping the connection open
 * unless the request says "Connection: close". bench/compare.sh measures it
 * beside nginx and Peregrine: no server can cost less CPU per request.
 *
 * usage: floor PORT BODY_BYTES
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 512
#define BUF 16384

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: floor PORT BODY_BYTES\n"); return 2; }
    int port = atoi(argv[1]), body = atoi(argv[2]);
    char *resp = malloc(body + 256);
    int head = sprintf(resp, "HTTP/1.1 200 OK\r\nServer: floor\r\nContent-Type: text/html\r\n"
                             "Content-Length: %d\r\nConnection: keep-alive\r\n\r\n", body);
    memset(resp + head, 'x', body);
    int len = head + body;

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
            int close_after = strstr(buf, "Connection: close") != NULL;
            for (char *p = buf; (p = strstr(p, "\r\n\r\n")) != NULL; p += 4)
                if (write(fd, resp, len) < 0) break;
            if (close_after) close(fd);
        }
    }
}
