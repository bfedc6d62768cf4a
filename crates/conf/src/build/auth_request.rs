//! `auth_request` and `auth_request_set` (`ngx_http_auth_request_module`):
//! the URI of the access check's subrequest (`off` turns an inherited one
//! off), and the variables set from its answer (a variable as `set`
//! makes it, or `$args`; a value with variables, read in the
//! subrequest's context). The list of `auth_request_set` of one level
//! replaces its parent's, as nginx merges the array. The run-time side
//! is `peregrine_core::auth_request`.

use super::Env;
use super::handlers::{arg, msg, set};
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::{AuthRequestSet, SetTarget};
use crate::syntax::Directive;

pub fn auth_request(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let uri = match arg(d, 0) {
        "off" => None,
        u => Some(u.to_string()),
    };
    set(&mut l.auth_request, uri, d)
}

/// `auth_request_set $variable value` (`ngx_http_auth_request_set`): the
/// variable made changeable as `set` makes it (a core variable other
/// than `$args` is "the duplicate ... variable").
pub fn auth_request_set(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let name = arg(d, 0);
    let Some(var) = name.strip_prefix('$') else {
        return Err(msg(d, format!("invalid variable name \"{name}\"")));
    };
    let lower = var.to_ascii_lowercase();
    let target = match lower.as_str() {
        "args" => SetTarget::Args,
        n if crate::variables::KNOWN.contains(&n) => {
            return Err(msg(d, format!("the duplicate \"{var}\" variable")));
        }
        n => {
            env.declare(n);
            SetTarget::Var(env.set_index(n))
        }
    };
    let value = super::rewrite::compile(arg(d, 1), d, env)?;
    l.auth_request_set
        .get_or_insert_with(Vec::new)
        .push(AuthRequestSet { target, value });
    Ok(())
}
