//! Interop: the `h2` crate as a client, over a real loopback TCP socket,
//! against a minimal test-only server loop that drives our `Connection`
//! with blocking std I/O (the engine's session will do the same with mio).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;

use bytes::Bytes;
use peregrine_h2::{Config, Connection, Event, Progress};

/// A request being received, then its response being sent.
#[derive(Default)]
struct Exchange {
    path: String,
    body: Vec<u8>,
    /// The response body and how much of it went out.
    out: Vec<u8>,
    sent: usize,
    trailers: bool,
    responding: bool,
}

fn respond(conn: &mut Connection, id: u32, ex: &mut Exchange) {
    ex.responding = true;
    let (status, body, trailers): (u16, Vec<u8>, bool) = match ex.path.as_str() {
        "/hello" => (200, b"hello world".to_vec(), false),
        "/big" => (
            200,
            (0..300_000u32).map(|i| (i % 251) as u8).collect(),
            false,
        ),
        "/echo" => (200, std::mem::take(&mut ex.body), true),
        _ => (404, b"not found".to_vec(), false),
    };
    let len = body.len().to_string();
    let fields: [(&[u8], &[u8]); 2] = [
        (b"content-type", b"text/plain"),
        (b"content-length", len.as_bytes()),
    ];
    conn.send_headers(id, status, &fields, false).unwrap();
    ex.out = body;
    ex.trailers = trailers;
}

/// Sends what the windows allow of each response body, zero-copy: the
/// frame header from the connection, the payload from the exchange.
fn pump(conn: &mut Connection, exchanges: &mut HashMap<u32, Exchange>, sock: &mut TcpStream) {
    sock.write_all(conn.output()).unwrap();
    conn.advance_output(conn.output().len());
    let mut done = Vec::new();
    for (&id, ex) in exchanges.iter_mut().filter(|(_, ex)| ex.responding) {
        loop {
            let rest = ex.out.len() - ex.sent;
            let Ok(f) = conn.data_frame(id, rest, !ex.trailers) else {
                break;
            };
            if f.len == 0 && !f.end_stream {
                break;
            }
            sock.write_all(&f.header).unwrap();
            sock.write_all(&ex.out[ex.sent..ex.sent + f.len]).unwrap();
            ex.sent += f.len;
            if ex.sent == ex.out.len() {
                if ex.trailers {
                    conn.send_trailers(
                        id,
                        &[(b"x-body-length", ex.out.len().to_string().as_bytes())],
                    )
                    .unwrap();
                }
                done.push(id);
                break;
            }
        }
    }
    for id in done {
        exchanges.remove(&id);
    }
    sock.write_all(conn.output()).unwrap();
    conn.advance_output(conn.output().len());
}

fn serve(mut sock: TcpStream, shutdown_after: Option<usize>) {
    let mut conn = Connection::new(Config::default());
    let mut exchanges: HashMap<u32, Exchange> = HashMap::new();
    let mut buf = Vec::new();
    let mut tmp = vec![0u8; 64 * 1024];
    let mut requests = 0;
    loop {
        pump(&mut conn, &mut exchanges, &mut sock);
        if conn.is_finished() {
            return;
        }
        let n = sock.read(&mut tmp).unwrap_or(0);
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&tmp[..n]);
        conn.start_read();
        let mut pos = 0;
        loop {
            let event = match conn.recv(&buf[pos..]) {
                Ok(Progress::Partial) => break,
                Ok(Progress::Frame { consumed, event }) => {
                    pos += consumed;
                    event
                }
                Err(e) => panic!("connection error: {e}"),
            };
            match event {
                Some(Event::Request {
                    stream,
                    head,
                    end_stream,
                }) => {
                    requests += 1;
                    let path = String::from_utf8(head.path.unwrap()).unwrap();
                    let ex = exchanges.entry(stream).or_default();
                    ex.path = path;
                    if end_stream {
                        respond(&mut conn, stream, ex);
                    }
                    if Some(requests) == shutdown_after {
                        conn.shutdown();
                    }
                }
                Some(Event::Data {
                    stream,
                    data,
                    end_stream,
                }) => {
                    let ex = exchanges.get_mut(&stream).unwrap();
                    ex.body.extend_from_slice(data);
                    conn.release(stream, data.len() as u32);
                    if end_stream {
                        respond(&mut conn, stream, ex);
                    }
                }
                Some(Event::Reset { stream, .. }) => {
                    exchanges.remove(&stream);
                }
                _ => {}
            }
        }
        buf.drain(..pos);
    }
}

fn server(shutdown_after: Option<usize>) -> (std::net::SocketAddr, thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || {
        let (sock, _) = l.accept().unwrap();
        serve(sock, shutdown_after);
    });
    (addr, t)
}

async fn client(addr: std::net::SocketAddr) -> h2::client::SendRequest<Bytes> {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

async fn fetch(
    client: &mut h2::client::SendRequest<Bytes>,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
) -> (u16, Vec<u8>, Option<http::HeaderMap>) {
    let req = http::Request::builder()
        .method(method)
        .uri(format!("http://localhost{path}"))
        .body(())
        .unwrap();
    let mut c = client.clone().ready().await.unwrap();
    let (resp, mut send) = c.send_request(req, body.is_none()).unwrap();
    if let Some(b) = body {
        send.send_data(Bytes::from(b), true).unwrap();
    }
    let resp = resp.await.unwrap();
    let status = resp.status().as_u16();
    let mut body = resp.into_body();
    let mut got = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.unwrap();
        body.flow_control().release_capacity(chunk.len()).unwrap();
        got.extend_from_slice(&chunk);
    }
    let trailers = body.trailers().await.unwrap();
    (status, got, trailers)
}

/// Drops the client (its connection task then closes the socket) and waits
/// for the server thread off the runtime's thread, which must keep running.
async fn finish(c: h2::client::SendRequest<Bytes>, t: thread::JoinHandle<()>) {
    drop(c);
    tokio::task::spawn_blocking(move || t.join().unwrap())
        .await
        .unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn h2_client_gets_responses_bodies_and_trailers() {
    let (addr, t) = server(None);
    let mut c = client(addr).await;
    let (status, body, _) = fetch(&mut c, "GET", "/hello", None).await;
    assert_eq!((status, body.as_slice()), (200, &b"hello world"[..]));
    let (status, _, _) = fetch(&mut c, "GET", "/nope", None).await;
    assert_eq!(status, 404);
    // 300 kB down: more than the client's 64 kB window, so its WINDOW_UPDATEs drive us.
    let (status, body, _) = fetch(&mut c, "GET", "/big", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        (0..300_000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>()
    );
    // 200 kB up: more than our 64 kB preread window, so our WINDOW_UPDATEs drive it.
    let up: Vec<u8> = (0..200_000u32).map(|i| (i % 13) as u8).collect();
    let (status, body, trailers) = fetch(&mut c, "POST", "/echo", Some(up.clone())).await;
    assert_eq!(status, 200);
    assert_eq!(body, up);
    assert_eq!(trailers.unwrap()["x-body-length"], "200000");
    finish(c, t).await;
}

#[tokio::test(flavor = "current_thread")]
async fn h2_client_runs_concurrent_streams() {
    let (addr, t) = server(None);
    let c = client(addr).await;
    let mut tasks = Vec::new();
    for i in 0..20 {
        let mut c = c.clone();
        let path = if i % 2 == 0 { "/big" } else { "/hello" };
        tasks.push(tokio::spawn(async move {
            fetch(&mut c, "GET", path, None).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let (status, body, _) = task.await.unwrap();
        assert_eq!(status, 200);
        assert_eq!(body.len(), if i % 2 == 0 { 300_000 } else { 11 });
    }
    finish(c, t).await;
}

#[tokio::test(flavor = "current_thread")]
async fn graceful_shutdown_serves_the_streams_in_flight() {
    // The server starts its two-step GOAWAY at the third request; the three
    // sent together are all answered, and the connection then closes.
    let (addr, t) = server(Some(3));
    let c = client(addr).await;
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let mut c = c.clone();
        tasks.push(tokio::spawn(async move {
            fetch(&mut c, "GET", "/big", None).await
        }));
    }
    for task in tasks {
        assert_eq!(task.await.unwrap().0, 200);
    }
    // The server ends by itself (final GOAWAY sent, no stream left) while
    // the client still holds the connection, and the client knows it.
    let ended = tokio::task::spawn_blocking(move || t.join().unwrap());
    tokio::time::timeout(std::time::Duration::from_secs(10), ended)
        .await
        .unwrap()
        .unwrap();
    let req = http::Request::builder()
        .uri("http://localhost/hello")
        .body(())
        .unwrap();
    let refused = match c.clone().ready().await {
        Err(_) => true,
        Ok(mut c) => match c.send_request(req, true) {
            Err(_) => true,
            Ok((resp, _)) => resp.await.is_err(),
        },
    };
    assert!(refused, "a request after the final GOAWAY must fail");
    drop(c);
}

#[tokio::test(flavor = "current_thread")]
async fn a_stream_the_client_resets_leaves_the_connection_serving() {
    let (addr, t) = server(None);
    let mut c = client(addr).await;
    for _ in 0..5 {
        let req = http::Request::builder()
            .uri("http://localhost/big")
            .body(())
            .unwrap();
        let (resp, mut send) = c
            .clone()
            .ready()
            .await
            .unwrap()
            .send_request(req, false)
            .unwrap();
        send.send_reset(h2::Reason::CANCEL);
        drop(resp);
    }
    let (status, body, _) = fetch(&mut c, "GET", "/hello", None).await;
    assert_eq!((status, body.as_slice()), (200, &b"hello world"[..]));
    finish(c, t).await;
}
