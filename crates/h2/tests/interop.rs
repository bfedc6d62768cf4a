//! Interop: the `h2` crate as a client, over a real loopback TCP socket,
//! against a minimal test-only server loop that drives our `Connection`
//! with blocking std I/O (the engine's session will do the same with mio).

#[path = "support/server_loop.rs"]
mod server_loop;

use std::net::TcpListener;
use std::thread;

use bytes::Bytes;

fn server(shutdown_after: Option<usize>) -> (std::net::SocketAddr, thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = thread::spawn(move || {
        let (sock, _) = l.accept().unwrap();
        server_loop::serve(sock, shutdown_after).expect("no connection error");
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
