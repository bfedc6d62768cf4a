//! Handlers of the http core module's client body directives
//! (`client_body_in_file_only`, `client_body_in_single_buffer`,
//! `client_body_temp_path`); the engine's `body` module reads them.

use std::path::PathBuf;
use std::sync::Arc;

use super::Env;
use super::handlers::{arg, flag, msg, set_with};
use super::raw::{RawLoc, full_name};
use crate::error::Result;
use crate::model::{InFileOnly, TempPath};
use crate::syntax::Directive;
use crate::values::parse_number;

/// `client_body_in_file_only on|clean|off` (nginx's enum slot).
pub fn client_body_in_file_only(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.client_body_in_file_only, d, || match arg(d, 0) {
        "off" => Ok(InFileOnly::Off),
        "on" => Ok(InFileOnly::On),
        "clean" => Ok(InFileOnly::Clean),
        v => Err(msg(d, format!("invalid value \"{v}\""))),
    })
}

pub fn client_body_in_single_buffer(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.client_body_in_single_buffer, d, || flag(d))
}

/// `client_body_temp_path DIR [L1 [L2 [L3]]]` (nginx's
/// `ngx_conf_set_path_slot`: each level 1 or 2).
pub fn client_body_temp_path(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    set_with(&mut l.client_body_temp_path, d, || {
        let mut levels = Vec::new();
        for level in &d.args[1..] {
            match parse_number(level) {
                Some(n @ (1 | 2)) => levels.push(n as u8),
                _ => return Err(msg(d, format!("invalid value \"{level}\""))),
            }
        }
        Ok(Arc::new(TempPath {
            dir: PathBuf::from(full_name(env.prefix, arg(d, 0))),
            levels,
        }))
    })
}
