//! `auth_basic` and `auth_basic_user_file` (`ngx_http_auth_basic_module`):
//! the realm (a value with variables; `off` turns it off below) and the
//! htpasswd file (with variables; relative to the configuration's
//! directory, as nginx's conf prefix). Each is inherited on its own. The
//! run-time side is `peregrine_core::auth_basic`.

use super::Env;
use super::handlers::set;
use super::raw::RawLoc;
use crate::error::Result;
use crate::model::UserFile;
use crate::syntax::Directive;

pub fn auth_basic(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.auth_basic, d.args[0].clone(), d)
}

pub fn auth_basic_user_file(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let file = UserFile {
        path: d.args[0].clone(),
        conf_dir: env.conf_dir.to_string_lossy().into_owned(),
    };
    set(&mut l.auth_basic_user_file, file, d)
}
