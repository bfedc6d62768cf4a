//! The proxy's wait for its resolver: a `proxy_pass` host built from
//! variables is looked up by the location's `resolver` before the peer is
//! chosen (nginx's `ngx_http_upstream_resolve_handler`); its addresses
//! become the request's round-robin group.

use peregrine_conf::model::LogLevel;
use peregrine_core::proxy::Target;
use peregrine_resolver::Lookup;

use super::Machine;
use super::owner::Owner;
use super::{Fail, Io, Proxy};
use crate::ctx::Ctx;

pub(crate) trait Resolve: Owner + Sized {
    /// `Done` when `name`'s group is ready, `Wait` while it is looked up,
    /// 502 and nginx's `could not be resolved` when it cannot be.
    fn resolve(&mut self, p: &mut Proxy, name: String, port: u16, key: usize, cx: &mut Ctx) -> Io {
        let Some(conf) = p.job.conf.resolver.clone() else {
            return Io::Fail(Fail::NoLive);
        };
        let timeout = p.job.conf.resolver_timeout;
        let registry = cx.upstreams.registry.as_ref();
        match cx
            .resolvers
            .lookup(&conf, &name, key, cx.now, timeout, registry)
        {
            Lookup::Ready(ips) => {
                let t = Target::Resolve(name, port);
                cx.upstreams.groups.set_resolved(&t, &ips);
                Io::Done
            }
            Lookup::Pending => Io::Wait,
            Lookup::Failed(e) => {
                let text = format!("{name} could not be resolved ({e})");
                self.log_upstream(p, cx, LogLevel::Error, &text);
                Io::Fail(Fail::NoLive)
            }
        }
    }
}

impl<T: Owner> Resolve for T {}
