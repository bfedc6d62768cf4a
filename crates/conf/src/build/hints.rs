//! The value checks of the tuning hints added with nginx's full directive
//! list, and `load_module`. A hint's check reads the value as nginx's
//! handler does (so a configuration nginx refuses is refused here too) and
//! says whether the directive now counts as set at its level (`false` for
//! directives nginx lets repeat: `env`, `thread_pool`, `debug_connection`).
//! Why each directive is a hint is said at its row in the table.

use super::Env;
use super::handlers::{arg, bufs, invalid, msg, size};
use super::raw::RawMain;
use crate::error::Result;
use crate::known::{self, Loadable};
use crate::syntax::Directive;
use crate::values::{parse_number, parse_size};

/// An offset (`ngx_conf_set_off_slot`: `k`, `m`, `g` units): `worker_rlimit_core`,
/// `directio_alignment`.
pub fn hint_offset(d: &Directive) -> Result<bool> {
    parse_size(arg(d, 0))
        .map(|_| true)
        .ok_or_else(|| invalid(d))
}

/// A string nginx only stores (`lock_file`, `working_directory`,
/// `google_perftools_profiles`).
pub fn hint_string(_: &Directive) -> Result<bool> {
    Ok(true)
}

/// `debug_points stop | abort` (`ngx_conf_set_enum_slot`).
pub fn hint_debug_points(d: &Directive) -> Result<bool> {
    match arg(d, 0) {
        "stop" | "abort" => Ok(true),
        v => Err(msg(d, format!("invalid value \"{v}\""))),
    }
}

/// `env NAME` or `env NAME=VALUE` (nginx's `ngx_set_env` takes any word,
/// any number of times). Setting `TZ` is refused: nginx's workers then
/// write their log times in that zone, while Peregrine's follow the `TZ` it
/// was started with.
pub fn hint_env(d: &Directive) -> Result<bool> {
    if arg(d, 0).starts_with("TZ=") {
        return Err(msg(
            d,
            "\"env TZ=...\" is not supported by Peregrine yet: log times follow the TZ Peregrine was started with",
        ));
    }
    Ok(false)
}

/// `thread_pool name threads=N [max_queue=N]` (nginx's `ngx_thread_pool`:
/// other parameters are ignored; a pool may be declared once per name, a
/// check left out here since no pool is made).
pub fn hint_thread_pool(d: &Directive) -> Result<bool> {
    let mut threads = false;
    for a in &d.args[1..] {
        if let Some(n) = a.strip_prefix("threads=") {
            if parse_number(n).is_none_or(|n| n == 0) {
                return Err(msg(d, format!("invalid threads value \"{a}\"")));
            }
            threads = true;
        } else if let Some(n) = a.strip_prefix("max_queue=")
            && parse_number(n).is_none()
        {
            return Err(msg(d, format!("invalid max_queue value \"{a}\"")));
        }
    }
    if !threads {
        return Err(msg(d, "\"thread_pool\" must have \"threads\" parameter"));
    }
    Ok(false)
}

/// `debug_connection address | CIDR | hostname | unix:` (any number):
/// nginx resolves host names here; Peregrine, which does not act on it,
/// does not.
pub fn hint_repeatable(_: &Directive) -> Result<bool> {
    Ok(false)
}

/// `aio on | off | threads[=pool]` (nginx's `ngx_http_core_set_aio`).
pub fn hint_aio(d: &Directive) -> Result<bool> {
    let v = arg(d, 0);
    let threads = v == "threads" || v.starts_with("threads=");
    if v == "on" || v == "off" || threads {
        Ok(true)
    } else {
        Err(invalid(d))
    }
}

/// `directio size | off` (nginx's `ngx_http_core_directio`: an offset).
pub fn hint_directio(d: &Directive) -> Result<bool> {
    if arg(d, 0) == "off" {
        return Ok(true);
    }
    hint_offset(d)
}

/// `output_buffers number size` (`ngx_conf_set_bufs_slot`).
pub fn hint_bufs(d: &Directive) -> Result<bool> {
    bufs(d).map(|_| true)
}

/// `gzip_window size`: zlib's window, a power of two from 512 to 32k
/// (nginx's `ngx_http_gzip_window` post handler).
pub fn hint_gzip_window(d: &Directive) -> Result<bool> {
    power_of_two(d, 32 * 1024, "must be 512, 1k, 2k, 4k, 8k, 16k, or 32k")
}

/// `gzip_hash size`: zlib's memory level as a size, 512 to 128k (nginx's
/// `ngx_http_gzip_hash`).
pub fn hint_gzip_hash(d: &Directive) -> Result<bool> {
    power_of_two(
        d,
        128 * 1024,
        "must be 512, 1k, 2k, 4k, 8k, 16k, 32k, 64k, or 128k",
    )
}

/// A size slot whose post handler takes only the powers of two from 512 to
/// `max`, with nginx's wording of the refusal.
fn power_of_two(d: &Directive, max: usize, refusal: &str) -> Result<bool> {
    let n = size(d, arg(d, 0))?;
    if (512..=max).contains(&n) && n.is_power_of_two() {
        Ok(true)
    } else {
        Err(msg(d, format!("\"{}\" directive {refusal}", d.name)))
    }
}

/// `load_module file`: the module is named by the file (`ngx_X_module.so`,
/// as nginx's builds name them). One Peregrine has built in is accepted with
/// a notice; one of nginx's that Peregrine lacks too (Debian's stock
/// nginx.conf loads seven, used or not): each of its directives is refused
/// by name, so loading it changes nothing. Any other module is refused:
/// Peregrine cannot load code, and the module's directives would be unknown.
pub fn load_module(_: &mut RawMain, d: &Directive, env: &Env<'_>) -> Result<()> {
    let path = arg(d, 0);
    let file = path.rsplit('/').next().unwrap_or(path);
    let module = file.strip_suffix(".so").unwrap_or(file);
    match known::loadable(module) {
        Loadable::BuiltIn => env.warn(d, format!("module \"{module}\" is built into Peregrine")),
        Loadable::StockMissing => env.warn(
            d,
            format!("module \"{module}\" is not in Peregrine: its directives are refused"),
        ),
        Loadable::Foreign => {
            return Err(msg(
                d,
                format!("module \"{module}\" is not supported by Peregrine yet"),
            ));
        }
    }
    Ok(())
}
