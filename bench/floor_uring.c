/* The floor probe on io_uring: same behaviour and command line as
 * bench/floor.c (answers every complete request head "\r\n\r\n" with a
 * canned keep-alive response of BODY bytes; closes after "Connection: close").
 * bench/compare.sh runs it beside the epoll probe: it answers "how much could
 * a server save by leaving epoll + recv/send for io_uring", with no HTTP work
 * in either figure (docs/performance.md, "The io_uring floor").
 *
 * One ring, SINGLE_ISSUER|DEFER_TASKRUN, multishot accept, recv from a
 * provided buffer ring, sends as SQEs; one io_uring_submit_and_wait per turn
 * (every socket operation of a loop turn in one system call).
 *
 * usage: floor_uring PORT BODY_BYTES
 * Variants (environment, for the measurements only):
 *   FU_RECV=multi|oneshot   multishot recv (default) or one recv SQE per turn
 *   FU_SKIP=1               sends carry IOSQE_CQE_SKIP_SUCCESS (default 1)
 *   FU_REGFD=1              io_uring_register_ring_fd (default 1)
 *   FU_COOP=1               use COOP_TASKRUN|TASKRUN_FLAG instead of DEFER_TASKRUN
 *   FU_BUFSZ, FU_NBUF       provided buffer size / count (default 1024 / 2048)
 *   FU_INC=1                incremental buffer consumption (IOU_PBUF_RING_INC, 6.12+)
 *   FU_DIRECT=1             direct descriptors: multishot_accept_direct, fixed-file
 *                           SQEs (no fget/fput per op); TCP_NODELAY is inherited
 *                           from the listener (no setsockopt on a direct fd)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef IOU_PBUF_RING_INC
#define IOU_PBUF_RING_INC 2
#endif
#ifndef IORING_CQE_F_BUF_MORE
#define IORING_CQE_F_BUF_MORE (1U << 4)
#endif

#define SQ_ENTRIES 4096
#define CQ_ENTRIES 16384
#define BGID 0

enum { T_ACCEPT = 1, T_RECV = 2, T_SEND = 3 };
#define UD(t, fd) (((__u64)(t) << 32) | (__u32)(fd))

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufs;
static unsigned bufsz, nbuf, bmask, inc_mode, oneshot, skip, direct;
static char *resp;
static int resp_len, ls;
static int buf_adds;

static int envint(const char *k, int d) { const char *v = getenv(k); return v ? atoi(v) : d; }

static struct io_uring_sqe *sqe_get(void) {
    struct io_uring_sqe *s = io_uring_get_sqe(&ring);
    if (!s) { io_uring_submit(&ring); s = io_uring_get_sqe(&ring); }
    return s;
}

static void arm_accept(void) {
    struct io_uring_sqe *s = sqe_get();
    if (direct) io_uring_prep_multishot_accept_direct(s, ls, NULL, NULL, 0);
    else io_uring_prep_multishot_accept(s, ls, NULL, NULL, 0);
    io_uring_sqe_set_data64(s, UD(T_ACCEPT, ls));
}

static void arm_recv(int fd) {
    struct io_uring_sqe *s = sqe_get();
    if (oneshot) io_uring_prep_recv(s, fd, NULL, 0, 0);
    else io_uring_prep_recv_multishot(s, fd, NULL, 0, 0);
    s->flags |= IOSQE_BUFFER_SELECT | (direct ? IOSQE_FIXED_FILE : 0);
    s->buf_group = BGID;
    io_uring_sqe_set_data64(s, UD(T_RECV, fd));
}

static void queue_send(int fd, int link) {
    struct io_uring_sqe *s = sqe_get();
    io_uring_prep_send(s, fd, resp, resp_len, 0);
    if (skip) s->flags |= IOSQE_CQE_SKIP_SUCCESS;
    if (direct) s->flags |= IOSQE_FIXED_FILE;
    if (link) s->flags |= IOSQE_IO_LINK;
    io_uring_sqe_set_data64(s, UD(T_SEND, fd));
}

static void close_conn(int fd) {
    if (!direct) { close(fd); return; }
    struct io_uring_sqe *s = sqe_get();
    io_uring_prep_close_direct(s, fd);
    s->flags |= IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(s, 0);
}

static void recycle(unsigned bid) {
    /* one byte short: on_data NUL-terminates in place */
    io_uring_buf_ring_add(br, bufs + (size_t)bid * bufsz, bufsz - !inc_mode, bid, bmask, buf_adds);
    buf_adds++;
}

/* Data of one recv CQE: count heads, queue one send per head. Like floor.c,
 * heads split across two reads are not joined (wrk never splits them). */
static void on_data(int fd, char *p, int n, int more) {
    char save = p[n];
    p[n] = 0;
    int close_after = strstr(p, "Connection: close") != NULL, heads = 0;
    for (char *q = p; (q = strstr(q, "\r\n\r\n")) != NULL; q += 4) heads++;
    p[n] = save;
    for (int i = 0; i < heads; i++) queue_send(fd, i + 1 < heads);
    if (close_after) {
        /* Linked after the sends so the response leaves first; the fd is
         * closed by the ring, which also ends the multishot recv. */
        if (heads) {
            /* re-link: last send must link to the close */
            struct io_uring_sqe *last = &ring.sq.sqes[(ring.sq.sqe_tail - 1) & ring.sq.ring_mask];
            last->flags |= IOSQE_IO_LINK;
        }
        struct io_uring_sqe *s = sqe_get();
        /* A pending multishot recv holds its own reference to the socket:
         * close(fd) alone would send no FIN. Shut it down instead; the recv
         * then ends with 0 and the fd is closed there. */
        if (oneshot && direct) io_uring_prep_close_direct(s, fd);
        else if (oneshot) io_uring_prep_close(s, fd);
        else {
            io_uring_prep_shutdown(s, fd, SHUT_RDWR);
            if (direct) s->flags |= IOSQE_FIXED_FILE;
        }
        s->flags |= IOSQE_CQE_SKIP_SUCCESS;
        io_uring_sqe_set_data64(s, 0);
    } else if (oneshot || !more) {
        arm_recv(fd);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: floor_uring PORT BODY_BYTES\n"); return 2; }
    int port = atoi(argv[1]), body = atoi(argv[2]);
    resp = malloc(body + 256);
    int head = sprintf(resp, "HTTP/1.1 200 OK\r\nServer: floor\r\nContent-Type: text/html\r\n"
                             "Content-Length: %d\r\nConnection: keep-alive\r\n\r\n", body);
    memset(resp + head, 'x', body);
    resp_len = head + body;

    const char *rm = getenv("FU_RECV");
    oneshot = rm && !strcmp(rm, "oneshot");
    skip = envint("FU_SKIP", 1);
    bufsz = envint("FU_BUFSZ", 1024);
    nbuf = envint("FU_NBUF", 2048);
    inc_mode = envint("FU_INC", 0);
    direct = envint("FU_DIRECT", 0);
    bmask = io_uring_buf_ring_mask(nbuf);

    int one = 1;
    ls = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (direct) setsockopt(ls, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (bind(ls, (void *)&a, sizeof a) || listen(ls, 4096)) { perror("bind"); return 1; }

    struct io_uring_params p = { 0 };
    p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
    if (envint("FU_COOP", 0)) p.flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    else p.flags |= IORING_SETUP_DEFER_TASKRUN;
    p.cq_entries = CQ_ENTRIES;
    int r = io_uring_queue_init_params(SQ_ENTRIES, &ring, &p);
    if (r) { fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-r)); return 1; }
    if (envint("FU_REGFD", 1) && io_uring_register_ring_fd(&ring) < 0)
        fprintf(stderr, "register_ring_fd failed\n");

    if (direct) {
        struct rlimit rl;
        getrlimit(RLIMIT_NOFILE, &rl);
        if ((r = io_uring_register_files_sparse(&ring, rl.rlim_cur))) {
            fprintf(stderr, "register_files_sparse: %s\n", strerror(-r)); return 1;
        }
    }
    /* liburing 2.3 lacks io_uring_setup_buf_ring: map and register by hand. */
    br = mmap(NULL, nbuf * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
              MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    bufs = aligned_alloc(4096, (size_t)nbuf * bufsz + 1);
    struct io_uring_buf_reg reg = { .ring_addr = (unsigned long)br, .ring_entries = nbuf,
                                    .bgid = BGID, .pad = /* flags in newer headers */ inc_mode ? IOU_PBUF_RING_INC : 0 };
    if ((r = io_uring_register_buf_ring(&ring, &reg, 0))) {
        fprintf(stderr, "register_buf_ring: %s\n", strerror(-r)); return 1;
    }
    io_uring_buf_ring_init(br);
    for (unsigned i = 0; i < nbuf; i++) recycle(i);
    io_uring_buf_ring_advance(br, buf_adds);
    buf_adds = 0;

    /* Incremental mode: each buffer is consumed piece by piece; remember
     * the offset already used per buffer id. */
    unsigned *inc_off = calloc(nbuf, sizeof *inc_off);

    arm_accept();
    for (;;) {
        r = io_uring_submit_and_wait(&ring, 1);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
            fprintf(stderr, "submit_and_wait: %s\n", strerror(-r)); return 1;
        }
        struct io_uring_cqe *cqe;
        unsigned head_i, seen = 0;
        io_uring_for_each_cqe(&ring, head_i, cqe) {
            seen++;
            __u64 ud = cqe->user_data;
            int t = ud >> 32, fd = (int)(ud & 0xffffffff), res = cqe->res;
            unsigned fl = cqe->flags;
            if (t == T_ACCEPT) {
                if (res >= 0 && direct) arm_recv(res);
                else if (res >= 0) {
                    setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    arm_recv(res);
                }
                if (!(fl & IORING_CQE_F_MORE)) arm_accept();
            } else if (t == T_RECV) {
                if (res > 0) {
                    unsigned bid = fl >> IORING_CQE_BUFFER_SHIFT;
                    char *base = bufs + (size_t)bid * bufsz;
                    if (inc_mode) {
                        char *d = base + inc_off[bid];
                        /* copy out: buffer end may be the next bid's start */
                        char tmp[res + 1];
                        memcpy(tmp, d, res);
                        if (fl & IORING_CQE_F_BUF_MORE) inc_off[bid] += res;
                        else { inc_off[bid] = 0; recycle(bid); }
                        on_data(fd, tmp, res, fl & IORING_CQE_F_MORE);
                    } else {
                        on_data(fd, base, res, fl & IORING_CQE_F_MORE);
                        recycle(bid);
                    }
                } else if (res == -ENOBUFS) {
                    if (!(fl & IORING_CQE_F_MORE)) arm_recv(fd);
                } else {
                    if (fl & IORING_CQE_F_BUFFER) recycle(fl >> IORING_CQE_BUFFER_SHIFT);
                    if (res != -ECANCELED && res != -EBADF) close_conn(fd);
                }
            } else if (t == T_SEND) {
                /* only failures arrive when FU_SKIP=1; the recv side sees the close */
            }
        }
        io_uring_cq_advance(&ring, seen);
        if (buf_adds) { io_uring_buf_ring_advance(br, buf_adds); buf_adds = 0; }
    }
}
