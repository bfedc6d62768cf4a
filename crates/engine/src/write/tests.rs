use super::*;
use mio::net::TcpStream;
use peregrine_codec::response::{SERVER_NAME, SERVER_VERSION};
use std::io::Read;
use std::sync::Arc;

fn response(head: &str, body: Body) -> Response {
    Response {
        status: 200,
        head: peregrine_core::fixtures::fields_of(
            head,
            head[..head.find("ETag").unwrap_or(head.len())]
                .matches("\r\n")
                .count(),
        )
        .into(),
        content_length: Some(body.len()),
        chunked: false,
        trailers: None,
        body,
        keepalive: true,
        header_only: false,
        conf: None,
        server: None,
        compressible: false,
    }
}

#[test]
fn ok_start_is_the_codec_status_line_then_server_and_date() {
    let line = peregrine_codec::response::status_line(peregrine_codec::Version::Http11, 200);
    assert_eq!(OK_START, [line, SERVER_DATE].concat());
}

/// A backend's Server or Date passed on stands for the writer's own.
#[test]
fn own_server_and_date_can_be_left_out() {
    let start = HeadStart::new(b"Mon, 30 Nov 2026 11:11:03 GMT");
    let ch = ConnHeader {
        keepalive: false,
        keepalive_header: None,
    };
    let mut r = response("Date: passed\r\n", Body::Empty);
    r.head.to_mut().omit_own_date();
    let mut out = Vec::new();
    serialize_head(&mut out, &r, &start, &ch, false);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!(
            "HTTP/1.1 200 OK\r\nServer: {SERVER_VERSION}\r\nDate: passed\r\nConnection: close\r\n\r\n"
        )
    );
    r.head.to_mut().omit_own_server();
    let mut out = Vec::new();
    serialize_head(&mut out, &r, &start, &ch, false);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "HTTP/1.1 200 OK\r\nDate: passed\r\nConnection: close\r\n\r\n"
    );
}

#[test]
fn head_layout_matches_nginx() {
    let r = response(
        "Content-Type: text/html\r\nContent-Length: 6\r\nETag: \"e\"\r\n",
        Body::Empty,
    );
    let mut out = Vec::new();
    let ch = ConnHeader {
        keepalive: true,
        keepalive_header: Some(Duration::from_secs(7)),
    };
    let start = HeadStart::new(b"Mon, 30 Nov 2026 11:11:03 GMT");
    serialize_head(&mut out, &r, &start, &ch, false);
    let text = String::from_utf8(out).unwrap();
    let expected_tail = format!(
        "Server: {SERVER_VERSION}\r\nDate: Mon, 30 Nov 2026 11:11:03 GMT\r\n\
        Content-Type: text/html\r\nContent-Length: 6\r\nConnection: keep-alive\r\n\
        Keep-Alive: timeout=7\r\nETag: \"e\"\r\n\r\n"
    );
    assert!(text.ends_with(&expected_tail), "{text}");
    let mut out = Vec::new();
    let ch = ConnHeader {
        keepalive: false,
        keepalive_header: Some(Duration::from_secs(7)),
    };
    serialize_head(&mut out, &r, &start, &ch, true);
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("HTTP/1.1 100 Continue\r\n\r\n"));
    assert!(text.contains("Connection: close\r\nETag"));
    assert!(!text.contains("Keep-Alive"));
}

fn pair() -> (std::net::TcpStream, TcpStream) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (s, _) = l.accept().unwrap();
    s.set_nonblocking(true).unwrap();
    (c, TcpStream::from_std(s))
}

fn temp_file(data: &[u8]) -> Rc<std::fs::File> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("peregrine-engine-w-{}-{n}", std::process::id()));
    std::fs::write(&path, data).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    Rc::new(f)
}

/// Writes everything, draining the client side whenever the socket is full.
fn send_all(out: &mut Output, s: &mut TcpStream, c: &mut std::net::TcpStream) -> Vec<u8> {
    let mut pool = Pool::default();
    let mut got = Vec::new();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    loop {
        match out.write(s, &mut pool, 0).unwrap() {
            Progress::Done => break,
            Progress::Blocked => {
                let mut buf = vec![0; 1 << 16];
                let n = c.read(&mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            Progress::Limited => panic!("no budget was set"),
        }
    }
    let mut buf = vec![0; 1 << 16];
    while let Ok(n) = c.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    got
}

/// The same bytes in the same order whichever way they leave: sendfile or
/// read+writev, with or without `MSG_MORE` before each file piece
/// (`tcp_nopush`).
#[test]
fn writes_head_mem_and_file_parts_in_order() {
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    for (sendfile, nopush) in [(true, true), (true, false), (false, true), (false, false)] {
        let file = temp_file(&data);
        let body = Body::Parts(vec![
            Body::Static(b"--a\r\n"),
            Body::File {
                file: file.clone(),
                offset: 10,
                len: 250_000,
            },
            Body::Shared(Arc::from(&b"--b\r\n"[..])),
            Body::Empty,
            Body::File {
                file,
                offset: 0,
                len: 5,
            },
        ]);
        let (mut c, mut s) = pair();
        let mut out = Output::new(b"HEAD\r\n".to_vec(), &body, false, sendfile);
        out.nopush = nopush;
        let got = send_all(&mut out, &mut s, &mut c);
        let mut want = b"HEAD\r\n--a\r\n".to_vec();
        want.extend_from_slice(&data[10..250_010]);
        want.extend_from_slice(b"--b\r\n");
        want.extend_from_slice(&data[..5]);
        assert_eq!(got.len(), want.len());
        assert!(got == want, "sendfile={sendfile} nopush={nopush}");
        assert_eq!(out.head_bytes, 6);
        assert_eq!(out.body_bytes, want.len() as u64 - 6);
    }
}

#[test]
fn header_only_skips_body() {
    let (mut c, mut s) = pair();
    let mut out = Output::new(b"H\r\n".to_vec(), &Body::Static(b"body"), true, true);
    assert_eq!(send_all(&mut out, &mut s, &mut c), b"H\r\n");
}

#[test]
fn truncated_file_stops_without_other_bytes() {
    for sendfile in [true, false] {
        let file = temp_file(b"short");
        let body = Body::File {
            file,
            offset: 0,
            len: 100,
        };
        let (_c, mut s) = pair();
        let mut out = Output::new(b"H\r\n".to_vec(), &body, false, sendfile);
        let mut pool = Pool::default();
        let err = out.write(&mut s, &mut pool, 0).unwrap_err();
        assert!(matches!(err, WriteError::Truncated), "{err}");
        assert_eq!(out.body_bytes, 5);
    }
}

/// A file that cannot be read (here a directory's descriptor: `pread`
/// gives EISDIR, as a failing disk gives EIO) is the disk's error, kept
/// apart from the client's so the log says `pread() failed` at crit; with
/// sendfile the same descriptor fails in `sendfile(2)`, the client-side
/// call (EINVAL: not a file the kernel can splice from).
#[test]
fn unreadable_file_is_a_read_error_not_a_send_error() {
    for sendfile in [false, true] {
        let dir = std::fs::File::open(std::env::temp_dir()).unwrap();
        let body = Body::File {
            file: Rc::new(dir),
            offset: 0,
            len: 100,
        };
        let (_c, mut s) = pair();
        let mut out = Output::new(b"H\r\n".to_vec(), &body, false, sendfile);
        let err = out.write(&mut s, &mut Pool::default(), 0).unwrap_err();
        if sendfile {
            assert!(matches!(err, WriteError::Sendfile(_)), "{err}");
        } else {
            assert!(matches!(err, WriteError::Read(_)), "{err}");
        }
        assert_eq!(out.body_bytes, 0);
    }
}

/// A small memory body leaves in the head's buffer (one `send`), still
/// counted as body; a larger one stays a separate piece; a body bound for
/// an encoder is not inlined (the encoder takes the pieces).
#[test]
fn small_memory_body_goes_out_with_the_head_and_counts_as_body() {
    for size in [1, INLINE_BODY_MAX, INLINE_BODY_MAX + 1, 200_000] {
        let data: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
        let body = Body::Shared(Arc::from(&data[..]));
        let (mut c, mut s) = pair();
        let mut out = Output::new(b"HEAD\r\n".to_vec(), &body, false, true);
        let got = send_all(&mut out, &mut s, &mut c);
        assert_eq!(&got[..6], b"HEAD\r\n");
        assert!(got[6..] == data[..], "size {size}");
        assert_eq!((out.head_bytes, out.body_bytes), (6, size as u64));
        let inlined = out.pieces.is_empty();
        assert_eq!(inlined, size <= INLINE_BODY_MAX, "size {size}");
    }
    let body = Body::Static(b"compress me");
    let enc =
        peregrine_compress::Encoder::with_length_hint(peregrine_compress::Coding::Gzip, 1, None)
            .unwrap();
    let mut out = Output {
        head: b"H\r\n".to_vec(),
        ..Output::default()
    };
    let comp = crate::compress::Compressing {
        encoder: enc,
        chunked: false,
    };
    out.start(&body, false, true, Some(Box::new(comp)), Framing::AsIs);
    assert_eq!(
        out.head, b"H\r\n",
        "the encoder's input stays out of the head"
    );
}

/// The head starts the same whether it is copied whole (200) or put
/// together (other statuses), and a new second's date replaces the old.
#[test]
fn head_start_follows_the_date() {
    let mut start = HeadStart::new(b"Mon, 30 Nov 2026 11:11:03 GMT");
    start.set_date(b"Mon, 30 Nov 2026 11:11:04 GMT");
    start.set_date(b"not a date");
    let ch = ConnHeader {
        keepalive: true,
        keepalive_header: None,
    };
    let mut r = response("Content-Length: 0\r\n", Body::Empty);
    for (status, line) in [(200, "200 OK"), (404, "404 Not Found"), (299, "299 ")] {
        r.status = status;
        let mut out = Vec::new();
        serialize_head(&mut out, &r, &start, &ch, false);
        let want = format!(
            "HTTP/1.1 {line}\r\nServer: {SERVER_VERSION}\r\nDate: Mon, 30 Nov 2026 11:11:04 GMT\r\n\
             Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"
        );
        assert_eq!(String::from_utf8(out).unwrap(), want, "{status}");
    }
    // `server_tokens off`: the name alone, on a 200 too.
    let mut conf = peregrine_core::fixtures::loc_conf("/");
    conf.server_tokens = peregrine_conf::model::ServerTokens::Off;
    r.conf = Some(Arc::new(conf));
    for (status, line) in [(200, "200 OK"), (404, "404 Not Found")] {
        r.status = status;
        let mut out = Vec::new();
        serialize_head(&mut out, &r, &start, &ch, false);
        let want = format!(
            "HTTP/1.1 {line}\r\nServer: {SERVER_NAME}\r\nDate: Mon, 30 Nov 2026 11:11:04 GMT\r\n\
             Content-Length: 0\r\nConnection: keep-alive\r\n\r\n"
        );
        assert_eq!(String::from_utf8(out).unwrap(), want, "{status}");
    }
}

/// The engine's `Server` texts are the codec's.
#[test]
fn server_texts_are_the_codec_ones() {
    assert_eq!(
        SERVER_DATE,
        format!("Server: {SERVER_VERSION}\r\nDate: ").as_bytes()
    );
    assert_eq!(
        SERVER_DATE_OFF,
        format!("Server: {SERVER_NAME}\r\nDate: ").as_bytes()
    );
}

/// A reset output keeps its buffers for the next response and holds
/// nothing of the last one's body.
#[test]
fn reset_keeps_buffers_and_releases_the_body() {
    let shared: Arc<[u8]> = Arc::from(&[7u8; INLINE_BODY_MAX + 1][..]);
    let mut pool = Pool::default();
    let mut out = Output::new(
        b"HEAD\r\n".to_vec(),
        &Body::Shared(shared.clone()),
        false,
        true,
    );
    assert_eq!(Arc::strong_count(&shared), 2, "a large body is referenced");
    let cap = out.head.capacity();
    out.reset(&mut pool);
    assert_eq!(Arc::strong_count(&shared), 1);
    assert!(out.head.is_empty() && out.pieces.is_empty());
    assert_eq!(out.head.capacity(), cap);
    assert_eq!((out.head_bytes, out.body_bytes, out.last), (0, 0, false));
    // A small body is copied, never referenced.
    let small: Arc<[u8]> = Arc::from(&b"small"[..]);
    out.head_mut().extend_from_slice(b"H\r\n");
    out.start(
        &Body::Shared(small.clone()),
        false,
        true,
        None,
        Framing::AsIs,
    );
    assert_eq!(Arc::strong_count(&small), 1);
    assert_eq!(out.head, b"H\r\nsmall");
}

/// Whatever the last response went through (a file read into the file
/// buffer, an encoder), a reset output starts the next one from nothing,
/// and sends it right.
#[test]
fn reset_after_file_and_encoder_leaves_nothing_behind() {
    let mut pool = Pool::default();
    let clean = |out: &Output| {
        out.head.is_empty()
            && out.pieces.is_empty()
            && out.file_buf.is_none()
            && out.deflate.is_none()
            && (out.next, out.file_buf_pos, out.head_pos) == (0, 0, 0)
            && (out.head_bytes, out.body_bytes, out.last, out.nopush) == (0, 0, false, false)
    };
    let file = temp_file(&[5u8; 70_000]);
    let body = Body::File {
        file,
        offset: 0,
        len: 70_000,
    };
    let (mut c, mut s) = pair();
    let mut out = Output::new(b"H\r\n".to_vec(), &body, false, false);
    out.last = true;
    assert_eq!(send_all(&mut out, &mut s, &mut c).len(), 70_003);
    out.reset(&mut pool);
    assert!(clean(&out), "after a file read without sendfile");

    let enc =
        peregrine_compress::Encoder::with_length_hint(peregrine_compress::Coding::Gzip, 1, None)
            .unwrap();
    let comp = crate::compress::Compressing {
        encoder: enc,
        chunked: true,
    };
    out.head_mut().extend_from_slice(b"H\r\n");
    out.start(
        &Body::Static(b"compress me"),
        false,
        true,
        Some(Box::new(comp)),
        Framing::AsIs,
    );
    let (mut c, mut s) = pair();
    let got = send_all(&mut out, &mut s, &mut c);
    assert!(got.ends_with(b"0\r\n\r\n"), "a chunked gzip body");
    out.reset(&mut pool);
    assert!(clean(&out), "after an encoder");

    out.head_mut().extend_from_slice(b"H\r\n");
    out.start(&Body::Static(b"plain"), false, true, None, Framing::AsIs);
    let (mut c, mut s) = pair();
    assert_eq!(send_all(&mut out, &mut s, &mut c), b"H\r\nplain");
    assert_eq!((out.head_bytes, out.body_bytes), (3, 5));
}

/// `limit_rate`'s budget: each write sends at most what `limit` allows,
/// across head, memory and file pieces, read+writev or sendfile, and the
/// bytes still arrive whole and in order.
#[test]
fn a_budget_bounds_what_each_write_sends() {
    let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    for sendfile in [true, false] {
        let body = Body::Parts(vec![
            Body::Static(b"--a\r\n"),
            Body::File {
                file: temp_file(&data),
                offset: 0,
                len: data.len() as u64,
            },
            Body::Shared(Arc::from(&b"--b\r\n"[..])),
        ]);
        let (mut c, mut s) = pair();
        let mut out = Output::new(b"HEAD\r\n".to_vec(), &body, false, sendfile);
        let mut pool = Pool::default();
        let mut got = Vec::new();
        let mut writes = 0;
        loop {
            out.limit(1000);
            let before = out.head_bytes + out.body_bytes;
            let p = out.write(&mut s, &mut pool, 0).unwrap();
            let sent = out.head_bytes + out.body_bytes - before;
            assert!(
                sent <= 1000,
                "sendfile={sendfile}: {sent} bytes in one write"
            );
            writes += 1;
            let mut buf = vec![0; 4096];
            let mut read = 0;
            while read < sent as usize {
                let n = c.read(&mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
                read += n;
            }
            match p {
                Progress::Done => break,
                Progress::Limited => assert_eq!(sent, 1000),
                Progress::Blocked => panic!("a 1000-byte write blocked"),
            }
        }
        let mut want = b"HEAD\r\n--a\r\n".to_vec();
        want.extend_from_slice(&data);
        want.extend_from_slice(b"--b\r\n");
        assert!(got == want, "sendfile={sendfile}");
        assert_eq!(writes, want.len().div_ceil(1000));
    }
}

/// The payload a chunked body `wire` decodes to (codec's decoder, as a
/// client reads it), fed in two pieces split at `at`; `None` when it is
/// not one complete chunked body.
fn dechunk(wire: &[u8], at: usize) -> Option<Vec<u8>> {
    let mut dec = peregrine_codec::BodyDecoder::new(peregrine_codec::BodyKind::Chunked);
    let mut got = Vec::new();
    let mut buf = Vec::new();
    for piece in [&wire[..at], &wire[at..]] {
        buf.extend_from_slice(piece);
        let mut pos = 0;
        loop {
            let pr = dec.decode(&buf[pos..]).ok()?;
            got.extend_from_slice(&buf[pos + pr.data.start..pos + pr.data.end]);
            pos += pr.consumed;
            if pr.done {
                return (pos == buf.len()).then_some(got);
            }
            if pr.consumed == 0 {
                break;
            }
        }
        buf.drain(..pos);
    }
    None
}

/// Where a wire of `len` bytes is split for [`dechunk`]: every byte of
/// the framing at both ends (size line, last chunk, trailers), a stride
/// through the data between (each split decodes the whole wire).
fn split_points(len: usize) -> impl Iterator<Item = usize> {
    const EDGE: usize = 64;
    const STRIDE: usize = 97;
    (0..=len).filter(move |at| *at < EDGE || len - at < EDGE || at % STRIDE == 0)
}

/// The HTTP/1 writer frames a `chunked` response's body: one chunk, the
/// last chunk and the trailers, whatever the body is made of (inline
/// memory, a large memory piece, a file by sendfile or read); the bytes
/// parse as a chunked body split at every byte.
#[test]
fn chunked_framing_is_made_by_the_writer() {
    let mut trailers = FieldList::new();
    trailers.push(b"X-Var".to_vec(), b"a b".to_vec());
    trailers.push(b"X-Two".to_vec(), b"2".to_vec());
    let big: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let bodies = [
        (Body::Empty, Vec::new()),
        (Body::Static(b"abc"), b"abc".to_vec()),
        (Body::Shared(Arc::from(&big[..])), big.clone()),
        (
            Body::Parts(vec![Body::Static(b"<"), Body::Shared(Arc::from(&big[..]))]),
            [&b"<"[..], &big].concat(),
        ),
        (
            Body::File {
                file: temp_file(&big),
                offset: 0,
                len: big.len() as u64,
            },
            big.clone(),
        ),
    ];
    for (body, payload) in &bodies {
        for (t, sendfile) in [
            (None, true),
            (Some(&trailers), true),
            (Some(&trailers), false),
        ] {
            let mut out = Output::framed(
                b"H\r\n".to_vec(),
                body,
                false,
                sendfile,
                Framing::Chunked(t),
            );
            let (mut c, mut s) = pair();
            let got = send_all(&mut out, &mut s, &mut c);
            let wire = got.strip_prefix(b"H\r\n").unwrap();
            let end: &[u8] = match t {
                None => b"0\r\n\r\n",
                Some(_) => b"0\r\nX-Var: a b\r\nX-Two: 2\r\n\r\n",
            };
            assert!(wire.ends_with(end), "{:?}", String::from_utf8_lossy(wire));
            if !payload.is_empty() {
                let size = format!("{:x}\r\n", payload.len());
                assert!(wire.starts_with(size.as_bytes()), "one chunk");
            }
            for at in split_points(wire.len()) {
                assert_eq!(dechunk(wire, at).as_ref(), Some(payload), "split at {at}");
            }
            assert_eq!(out.body_bytes, wire.len() as u64, "framing counts as body");
        }
    }
}

/// A HEAD answer or one framed as is gets no chunk framing.
#[test]
fn chunked_framing_only_when_there_is_a_body() {
    let out = Output::framed(
        b"H\r\n".to_vec(),
        &Body::Empty,
        true,
        true,
        Framing::Chunked(None),
    );
    assert_eq!(out.head, b"H\r\n");
    let out = Output::framed(
        b"H\r\n".to_vec(),
        &Body::Static(b"abc"),
        false,
        true,
        Framing::AsIs,
    );
    assert_eq!(out.head, b"H\r\nabc");
    let mut l = Vec::new();
    push_chunk(&mut l, b"");
    assert!(l.is_empty(), "an empty chunk would end the body");
    push_chunk(&mut l, &[7; 26]);
    assert!(l.starts_with(b"1a\r\n") && l.ends_with(b"\r\n"));
}

/// A streamed body (the compression filter's output, produced block by
/// block from a file) goes out as several chunks and the last chunk; the
/// chunks decode to the gzip stream of the file.
#[test]
fn a_streamed_body_goes_out_as_chunks_then_the_last_chunk() {
    // Little to compress (an xorshift stream): the encoder has output
    // for every block it reads.
    let mut x = 0x9e37_79b9_u32;
    let data: Vec<u8> = (0..300_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let enc =
        peregrine_compress::Encoder::with_length_hint(peregrine_compress::Coding::Gzip, 1, None)
            .unwrap();
    let comp = crate::compress::Compressing {
        encoder: enc,
        chunked: true,
    };
    let body = Body::File {
        file: temp_file(&data),
        offset: 0,
        len: data.len() as u64,
    };
    let mut out = Output {
        head: b"H\r\n".to_vec(),
        ..Output::default()
    };
    out.start(&body, false, true, Some(Box::new(comp)), Framing::AsIs);
    let (mut c, mut s) = pair();
    let got = send_all(&mut out, &mut s, &mut c);
    let wire = got.strip_prefix(b"H\r\n").unwrap();
    assert!(wire.ends_with(b"\r\n0\r\n\r\n"), "the last chunk ends it");
    let gz = dechunk(wire, 0).expect("one chunked body");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(plain, data);
    // More than one chunk: a chunk-size line after the first chunk's data.
    let first = usize::from_str_radix(
        std::str::from_utf8(&wire[..wire.iter().position(|&b| b == b'\r').unwrap()]).unwrap(),
        16,
    )
    .unwrap();
    assert!(first < gz.len(), "streamed in several chunks");
}

/// nginx's chunked header filter leaves HTTP/1.0, HEAD, 1xx, 204 and 304
/// answers unframed: a response core marked `chunked` goes out as is
/// there, and framed only for an HTTP/1.1 request with a body.
#[test]
fn no_chunked_framing_for_http10_head_204_304() {
    let mut trailers = FieldList::new();
    trailers.push(b"X-T".to_vec(), b"1".to_vec());
    let marked = |status: u16, header_only: bool| {
        let mut r = response("Transfer-Encoding: chunked\r\n", Body::Static(b"abc"));
        r.status = status;
        r.header_only = header_only;
        r.content_length = None;
        r.chunked = true;
        r.trailers = Some(Box::new(trailers.clone()));
        r
    };
    let sent = |r: &Response, http11: bool| {
        let out = Output::framed(
            b"H\r\n".to_vec(),
            &r.body,
            r.header_only,
            true,
            Framing::of(r, http11),
        );
        String::from_utf8(out.head).unwrap()
    };
    assert_eq!(
        sent(&marked(200, false), true),
        "H\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"
    );
    assert_eq!(sent(&marked(200, false), false), "H\r\nabc", "HTTP/1.0");
    assert_eq!(sent(&marked(200, true), true), "H\r\n", "HEAD");
    for status in [101, 204, 304] {
        assert_eq!(sent(&marked(status, false), true), "H\r\nabc", "{status}");
    }
    let mut plain = marked(200, false);
    plain.chunked = false;
    assert_eq!(sent(&plain, true), "H\r\nabc", "not marked");
}
