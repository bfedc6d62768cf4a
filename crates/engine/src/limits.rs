//! The engine's side of the limit modules (`peregrine_core::limits`): what
//! core left for a request is kept with its exchange, so `limit_conn`'s
//! slots are given back when the exchange ends, however it ends (a client
//! that vanishes included: the exchange is dropped with its connection);
//! a request core delayed (`limit_req`'s delay, `auth_delay`) waits in
//! [`Phase::Held`] under the connection's timer, the worker loop serving
//! the others meanwhile, and then runs again. A client that closes while
//! held ends the request as nginx's `ngx_http_test_reading` does (499).

use peregrine_conf::model::LogLevel;
use peregrine_core::limits::Held;

use crate::ctx::Ctx;
use crate::exchange::Exchange;
use crate::http1::{Close, Http1, Phase, Step};
use crate::transport::Transport;

impl Http1 {
    /// Keeps `held` with `ex`; with a delay, holds the exchange (`Ok`),
    /// else gives it back to be answered (`Err`).
    pub(crate) fn hold(
        &mut self,
        mut ex: Box<Exchange>,
        held: Box<Held>,
        cx: &mut Ctx,
    ) -> Result<Step, Box<Exchange>> {
        let Some(delay) = held.delay else {
            // realip's address is the connection's for the rest of the
            // request, as nginx's `ngx_http_realip_set_addr` makes it: the
            // error and access logs' client (restored by `end_held`).
            let mut held = held;
            if let Some(real) = held.real_peer {
                held.conn_peer = Some(std::mem::replace(&mut self.info.peer, real));
            }
            ex.held = Some(held);
            return Err(ex);
        };
        ex.held = Some(held);
        self.ex = Some(ex);
        self.phase = Phase::Held;
        self.delayed = true;
        cx.timers.arm(self.key as usize, cx.now, delay);
        Ok(Step::Wait)
    }

    /// The end of an exchange core left something for: the connection's
    /// own address back (`ngx_http_realip_cleanup`). Its slots go with it.
    #[cold]
    pub(crate) fn end_held(&mut self, ex: &Exchange) {
        if let Some(peer) = ex.held.as_ref().and_then(|h| h.conn_peer) {
            self.info.peer = peer;
        }
    }

    /// A held request: still waiting (a closed client ends it), or its
    /// delay is over and it runs again.
    pub(crate) fn step_held(&mut self, t: &mut Transport, cx: &mut Ctx) -> Step {
        if self.delayed {
            if t.readable && t.peer_closed() {
                self.log(
                    cx,
                    LogLevel::Info,
                    "client prematurely closed connection",
                    "",
                );
                if let Some(r) = self.ex.as_mut().and_then(|e| e.resp.as_mut()) {
                    r.status = 499;
                }
                return Step::Close(Close::Normal);
            }
            return Step::Wait;
        }
        let Some(mut ex) = self.ex.take() else {
            return Step::Close(Close::Normal);
        };
        if let Some(r) = ex.held.take().and_then(|h| h.resume) {
            cx.core.resume(r, self.req_start);
        }
        ex.resp = None;
        self.start_exchange(t, ex, cx)
    }
}
