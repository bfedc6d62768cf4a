//! One function per directive: reads the arguments (already counted by the
//! table) into the level's raw settings, with nginx's messages. Generic
//! messages are nginx's slot functions': `"D" directive is duplicate`,
//! `"D" directive invalid value`, `"D" directive invalid number`,
//! `invalid value "X" in "D" directive, it must be "on" or "off"`.

use std::path::PathBuf;
use std::time::Duration;

use super::Env;
use super::listen;
use super::location::compile;
use super::logs;
use super::raw::*;
use crate::error::{ConfError, Result};
use crate::model::*;
use crate::syntax::Directive;
use crate::values::*;

pub(crate) fn arg(d: &Directive, i: usize) -> &str {
    d.args.get(i).map(String::as_str).unwrap_or_default()
}

pub(crate) fn msg(d: &Directive, m: impl Into<String>) -> ConfError {
    ConfError::at(&d.span, m)
}

pub(crate) fn duplicate(d: &Directive) -> ConfError {
    msg(d, format!("\"{}\" directive is duplicate", d.name))
}

pub(crate) fn invalid(d: &Directive) -> ConfError {
    msg(d, format!("\"{}\" directive invalid value", d.name))
}

pub(crate) fn invalid_number(d: &Directive) -> ConfError {
    msg(d, format!("\"{}\" directive invalid number", d.name))
}

/// Sets a value once per level, as nginx's slot functions do.
pub(crate) fn set<T>(slot: &mut Option<T>, v: T, d: &Directive) -> Result<()> {
    fresh(slot, d)?;
    *slot = Some(v);
    Ok(())
}

/// Refuses a second value at one level. nginx's slot functions (and most of
/// its own handlers) do this first, before reading the value: of
/// `x 1; x bad;` the error is "duplicate".
pub(crate) fn fresh<T>(slot: &Option<T>, d: &Directive) -> Result<()> {
    match slot {
        Some(_) => Err(duplicate(d)),
        None => Ok(()),
    }
}

/// [`set`] with the value read only once the slot is known to be free.
pub(crate) fn set_with<T>(
    slot: &mut Option<T>,
    d: &Directive,
    read: impl FnOnce() -> Result<T>,
) -> Result<()> {
    fresh(slot, d)?;
    *slot = Some(read()?);
    Ok(())
}

pub(crate) fn flag(d: &Directive) -> Result<bool> {
    parse_flag(arg(d, 0)).ok_or_else(|| {
        msg(
            d,
            format!(
                "invalid value \"{}\" in \"{}\" directive, it must be \"on\" or \"off\"",
                arg(d, 0),
                d.name
            ),
        )
    })
}

pub(crate) fn time(d: &Directive, s: &str) -> Result<Duration> {
    parse_time(s).ok_or_else(|| invalid(d))
}

fn time_sec(d: &Directive, s: &str) -> Result<Duration> {
    parse_time_sec(s).ok_or_else(|| invalid(d))
}

pub(crate) fn size(d: &Directive, s: &str) -> Result<usize> {
    parse_mem_size(s).ok_or_else(|| invalid(d))
}

pub(crate) fn number(d: &Directive) -> Result<u64> {
    parse_number(arg(d, 0)).ok_or_else(|| invalid_number(d))
}

/// `N size` (nginx's `ngx_conf_set_bufs_slot`).
pub(crate) fn bufs(d: &Directive) -> Result<(usize, usize)> {
    let n = parse_number(arg(d, 0))
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0);
    let s = parse_mem_size(arg(d, 1)).filter(|&s| s > 0);
    n.zip(s).ok_or_else(|| invalid(d))
}

fn bounded(d: &Directive, min: u32, max: u32) -> Result<u32> {
    let n = number(d)?;
    u32::try_from(n)
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| msg(d, format!("value must be between {min} and {max}")))
}

fn static_mode(d: &Directive) -> Result<StaticMode> {
    match arg(d, 0) {
        "on" => Ok(StaticMode::On),
        "off" => Ok(StaticMode::Off),
        "always" => Ok(StaticMode::Always),
        v => Err(msg(d, format!("invalid value \"{v}\""))),
    }
}

// ---- main ----

pub fn worker_processes(m: &mut RawMain, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&m.worker_processes, d)?;
    let v = match arg(d, 0) {
        "auto" => WorkerProcesses::Auto,
        s => WorkerProcesses::Count(
            parse_number(s)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| invalid(d))?,
        ),
    };
    set(&mut m.worker_processes, v, d)
}

/// nginx's CPU_SETSIZE: masks longer than this many CPUs are refused.
pub const MAX_CPUS: usize = 1024;

fn cpu_mask(d: &Directive, s: &str) -> Result<CpuMask> {
    if s.len() > MAX_CPUS {
        return Err(msg(
            d,
            format!("\"worker_cpu_affinity\" supports up to {MAX_CPUS} CPUs only"),
        ));
    }
    let mut words = vec![0u64; s.len().div_ceil(64).max(1)];
    for (cpu, ch) in s.bytes().rev().enumerate() {
        match ch {
            b'0' => {}
            b'1' => words[cpu / 64] |= 1 << (cpu % 64),
            _ => {
                return Err(msg(
                    d,
                    format!(
                        "invalid character \"{}\" in \"worker_cpu_affinity\"",
                        char::from(ch)
                    ),
                ));
            }
        }
    }
    Ok(CpuMask(words))
}

pub fn worker_cpu_affinity(m: &mut RawMain, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&m.worker_cpu_affinity, d)?;
    let v = if arg(d, 0) == "auto" {
        match d.args.len() {
            1 => CpuAffinity::Auto(None),
            2 => CpuAffinity::Auto(Some(cpu_mask(d, arg(d, 1))?)),
            _ => {
                return Err(msg(
                    d,
                    "invalid number of arguments in \"worker_cpu_affinity\" directive",
                ));
            }
        }
    } else {
        CpuAffinity::Masks(
            d.args
                .iter()
                .map(|a| cpu_mask(d, a))
                .collect::<Result<_>>()?,
        )
    };
    set(&mut m.worker_cpu_affinity, v, d)
}

pub fn worker_rlimit_nofile(m: &mut RawMain, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut m.worker_rlimit_nofile, d, || number(d))
}

pub fn worker_shutdown_timeout(m: &mut RawMain, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut m.worker_shutdown_timeout, d, || time(d, arg(d, 0)))
}

pub fn pid(m: &mut RawMain, d: &Directive, env: &Env<'_>) -> Result<()> {
    let p = PathBuf::from(full_name(env.prefix, arg(d, 0)));
    set(&mut m.pid, p, d)
}

pub fn daemon(m: &mut RawMain, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut m.daemon, d, || flag(d))
}

/// `user name [group]`. Names are looked up by the engine (through NSS, as
/// nginx's getpwnam), not here; like nginx, the directive only warns when not
/// running as root, and the engine then ignores it.
pub fn user(m: &mut RawMain, d: &Directive, env: &Env<'_>) -> Result<()> {
    fresh(&m.user, d)?;
    let u = UserConf {
        user: arg(d, 0).to_string(),
        group: d.args.get(1).cloned(),
    };
    set(&mut m.user, u, d)?;
    if !listen::running_as_root() {
        env.warn(
            d,
            "the \"user\" directive makes sense only if the master process runs with super-user privileges, ignored",
        );
    }
    Ok(())
}

// ---- events ----

pub fn worker_connections(e: &mut RawEvents, d: &Directive, _: &Env<'_>) -> Result<()> {
    if e.worker_connections.is_some() {
        return Err(duplicate(d));
    }
    let n = parse_number(arg(d, 0))
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| msg(d, format!("invalid number \"{}\"", arg(d, 0))))?;
    e.worker_connections = Some(n);
    Ok(())
}

/// Event methods nginx has on Linux; only epoll is what Peregrine uses.
const EVENT_METHODS: &[&str] = &["epoll", "poll", "select"];

pub fn use_method(e: &mut RawEvents, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&e.use_method, d)?;
    if !EVENT_METHODS.contains(&arg(d, 0)) {
        return Err(msg(d, format!("invalid event type \"{}\"", arg(d, 0))));
    }
    set(&mut e.use_method, arg(d, 0).to_string(), d)
}

pub fn multi_accept(e: &mut RawEvents, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut e.multi_accept, d, || flag(d))
}

// ---- server level ----

pub fn client_header_timeout(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.client_header_timeout, d, || time(d, arg(d, 0)))
}

pub fn client_header_buffer_size(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.client_header_buffer_size, d, || size(d, arg(d, 0)))
}

pub fn large_client_header_buffers(s: &mut RawSrv, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut s.large_client_header_buffers, d, || bufs(d))
}

pub fn listen(
    s: &mut RawServer,
    d: &Directive,
    listens: &mut listen::Listens,
    env: &Env<'_>,
) -> Result<()> {
    let conf = listen::parse(d)?;
    if conf.http2 {
        // nginx 1.25.1's ngx_http_core_listen.
        env.warn(
            d,
            "the \"listen ... http2\" directive is deprecated, use the \"http2\" directive instead",
        );
    }
    listens.register(&conf, d)?;
    s.listen.push(conf);
    Ok(())
}

/// One `server_name` argument (ngx_http_core_server_name).
fn server_name_one(d: &Directive, name: &str, env: &Env<'_>) -> Result<ServerName> {
    // ngx_http_core_server_name's first check: a leading `*` must be `*.`
    // plus something, a leading `.` must be followed by something.
    let invalid_start = match name.as_bytes() {
        [b'*', rest @ ..] => rest.len() < 2 || rest[0] != b'.',
        [b'.'] => true,
        _ => false,
    };
    if invalid_start {
        return Err(msg(d, format!("server name \"{name}\" is invalid")));
    }
    if let Some(re) = name.strip_prefix('~') {
        if re.is_empty() {
            return Err(msg(d, format!("empty regex in server name \"{name}\"")));
        }
        // nginx (ngx_http_core_server_name) compiles a server name regex
        // caseless only when it contains an uppercase letter; hosts are
        // matched lowercased.
        let caseless = re.bytes().any(|b| b.is_ascii_uppercase());
        return Ok(ServerName::Regex(compile(re, caseless, &d.span)?));
    }
    if name.contains('/') {
        env.warn(
            d,
            format_args!("server name \"{name}\" has suspicious symbols"),
        );
    }
    // nginx compares with ngx_strcasecmp.
    let name = if name.eq_ignore_ascii_case("$hostname") {
        env.hostname.to_string()
    } else {
        name.to_ascii_lowercase()
    };
    if let Some(rest) = name.strip_prefix("*.") {
        return Ok(ServerName::WildcardStart {
            suffix: format!(".{rest}"),
            also_bare: false,
        });
    }
    if name.starts_with('.') && name.len() > 1 {
        return Ok(ServerName::WildcardStart {
            suffix: name,
            also_bare: true,
        });
    }
    if let Some(rest) = name.strip_suffix(".*") {
        return Ok(ServerName::WildcardEnd(format!("{rest}.")));
    }
    if name.contains('*') {
        return Err(msg(
            d,
            format!("invalid server name or wildcard \"{name}\""),
        ));
    }
    Ok(ServerName::Exact(name))
}

pub fn server_name(
    s: &mut RawServer,
    d: &Directive,
    _: &mut listen::Listens,
    env: &Env<'_>,
) -> Result<()> {
    for a in &d.args {
        s.server_names.push(server_name_one(d, a, env)?);
    }
    Ok(())
}

// ---- location level ----

pub fn root(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    doc_root(l, d, env, false)
}

pub fn alias(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    if env.named_location {
        return Err(msg(
            d,
            "the \"alias\" directive cannot be used inside the named location",
        ));
    }
    doc_root(l, d, env, true)
}

/// nginx's `ngx_http_core_root`: one of root/alias per level; `root` loses
/// one trailing slash; relative paths are relative to the prefix unless the
/// path starts with a variable.
fn doc_root(l: &mut RawLoc, d: &Directive, env: &Env<'_>, is_alias: bool) -> Result<()> {
    if let Some(prev) = &l.root {
        let prev_alias = matches!(prev, DocRoot::Alias(_));
        return Err(if prev_alias == is_alias {
            duplicate(d)
        } else {
            let other = if prev_alias { "alias" } else { "root" };
            msg(
                d,
                format!(
                    "\"{}\" directive is duplicate, \"{other}\" directive was specified earlier",
                    d.name
                ),
            )
        });
    }
    let mut value = arg(d, 0).to_string();
    if value == "$document_root" || value == "$realpath_root" {
        return Err(msg(
            d,
            format!(
                "the {value} variable cannot be used in the \"{}\" directive",
                d.name
            ),
        ));
    }
    if !is_alias && value.ends_with('/') {
        value.pop();
    }
    if !value.is_empty() && !value.starts_with('$') {
        value = full_name(env.prefix, &value);
    }
    l.root = Some(if is_alias {
        DocRoot::Alias(value)
    } else {
        DocRoot::Root(value)
    });
    Ok(())
}

pub fn index(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    let list = l.index.get_or_insert_with(Vec::new);
    for (i, a) in d.args.iter().enumerate() {
        if a.is_empty() {
            return Err(msg(d, "index \"\" in \"index\" directive is invalid"));
        }
        if a.starts_with('/') && i + 1 != d.args.len() {
            env.warn(
                d,
                "only the last index in \"index\" directive should be absolute",
            );
        }
        list.push(a.clone());
    }
    Ok(())
}

pub fn autoindex(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.autoindex, d, || flag(d))
}

pub fn try_files(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.try_files, d)?;
    if let Some(code) = d.args.last().and_then(|a| a.strip_prefix('='))
        && parse_number(code).filter(|&c| c <= 999).is_none()
    {
        return Err(msg(d, format!("invalid code \"={code}\"")));
    }
    set(&mut l.try_files, d.args.clone(), d)
}

pub fn error_page(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let bad_arity = || msg(d, "invalid number of arguments in \"error_page\" directive");
    let [head @ .., before, target] = d.args.as_slice() else {
        return Err(bad_arity());
    };
    let target = target.clone();
    let mut code_args: &[String] = head;
    let mut overwrite = None;
    match before.strip_prefix('=') {
        Some(o) => {
            overwrite = Some(if o.is_empty() {
                None
            } else {
                Some(
                    parse_number(o)
                        .and_then(|c| u16::try_from(c).ok())
                        .ok_or_else(|| msg(d, format!("invalid value \"={o}\"")))?,
                )
            });
        }
        None => code_args = d.args.get(..d.args.len() - 1).unwrap_or_default(),
    }
    // nginx compiles the URI before it reads the codes.
    super::vars::check_value(d, &target)?;
    let mut codes = Vec::new();
    for c in code_args {
        // 499 is nginx's internal "client closed request", refused here.
        let code = parse_number(c)
            .filter(|&c| c != 499)
            .ok_or_else(|| msg(d, format!("invalid value \"{c}\"")))?;
        if !(300..=599).contains(&code) {
            return Err(msg(d, format!("value \"{c}\" must be between 300 and 599")));
        }
        codes.push(code as u16);
    }
    if codes.is_empty() {
        // `error_page = /x`: nginx reads the `=` where a code should be.
        return Err(msg(d, format!("invalid value \"{before}\"")));
    }
    l.error_pages
        .get_or_insert_with(Vec::new)
        .push(ErrorPageConf {
            codes,
            overwrite,
            target,
        });
    Ok(())
}

pub fn stub_status(l: &mut RawLoc, _: &Directive, _: &Env<'_>) -> Result<()> {
    l.stub_status = Some(true);
    Ok(())
}

pub fn metrics(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.metrics, d, || flag(d))
}

/// `health_status;` (Peregrine's): the location answers 200 while the
/// server takes work, 503 once a graceful shutdown has begun.
pub fn health_status(l: &mut RawLoc, _: &Directive, _: &Env<'_>) -> Result<()> {
    l.health_status = Some(true);
    Ok(())
}

/// `shutdown_delay TIME;` (Peregrine's): how long a graceful shutdown keeps
/// accepting, `health_status` answering 503, before it stops accepting.
pub fn shutdown_delay(m: &mut RawMain, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut m.shutdown_delay, d, || time(d, arg(d, 0)))
}

/// `config_watch off | TIME;` (Peregrine's): every TIME the master reads
/// the configuration's files again and reloads, as HUP, when one changed.
pub fn config_watch(m: &mut RawMain, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut m.config_watch, d, || match arg(d, 0) {
        "off" => Ok(None),
        t => time(d, t).map(|v| Some(v).filter(|v: &std::time::Duration| !v.is_zero())),
    })
}

pub fn default_type(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set(&mut l.default_type, arg(d, 0).to_string(), d)
}

pub fn charset(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.charset, d)?;
    let v = match arg(d, 0) {
        "off" => None,
        c => Some(c.to_string()),
    };
    set(&mut l.charset, v, d)
}

/// nginx's `ngx_http_types_slot`: appends; `*` means any type.
fn types_list(slot: &mut Option<Vec<String>>, d: &Directive) {
    let list = slot.get_or_insert_with(Vec::new);
    for a in &d.args {
        let t = a.to_ascii_lowercase();
        if !list.contains(&t) {
            list.push(t);
        }
    }
}

pub fn charset_types(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    types_list(&mut l.charset_types, d);
    Ok(())
}

macro_rules! flag_handler {
    ($name:ident, $field:ident) => {
        pub fn $name(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.$field, d, || flag(d))
        }
    };
}

macro_rules! time_handler {
    ($name:ident, $field:ident, $parse:ident) => {
        pub fn $name(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.$field, d, || $parse(d, arg(d, 0)))
        }
    };
}

flag_handler!(sendfile, sendfile);
flag_handler!(tcp_nopush, tcp_nopush);
flag_handler!(tcp_nodelay, tcp_nodelay);
flag_handler!(reset_timedout_connection, reset_timedout_connection);
flag_handler!(open_file_cache_errors, open_file_cache_errors);
flag_handler!(gzip, gzip);
flag_handler!(gzip_vary, gzip_vary);
time_handler!(client_body_timeout, client_body_timeout, time);
time_handler!(send_timeout, send_timeout, time);
time_handler!(open_file_cache_valid, open_file_cache_valid, time_sec);

/// `keepalive_timeout timeout [header_timeout]`, with nginx's wording of a
/// bad value (`ngx_http_core_keepalive`: `"keepalive_timeout" directive
/// invalid value`).
pub fn keepalive_timeout(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.keepalive.is_some() {
        return Err(duplicate(d));
    }
    let t = parse_time(arg(d, 0)).ok_or_else(|| invalid(d))?;
    let header = match d.args.get(1) {
        Some(h) => Some(parse_time_sec(h).ok_or_else(|| invalid(d))?),
        None => None,
    };
    l.keepalive = Some((t, header));
    Ok(())
}

pub fn keepalive_requests(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.keepalive_requests, d, || number(d))
}

pub fn client_max_body_size(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.client_max_body_size, d, || {
        parse_size(arg(d, 0)).ok_or_else(|| invalid(d))
    })
}

pub fn client_body_buffer_size(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.client_body_buffer_size, d, || size(d, arg(d, 0)))
}

/// nginx's default `inactive=` of `open_file_cache`.
pub const DEFAULT_OPEN_FILE_CACHE_INACTIVE: Duration = Duration::from_secs(60);

pub fn open_file_cache(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.open_file_cache.is_some() {
        return Err(duplicate(d));
    }
    let bad = |p: &str| msg(d, format!("invalid \"open_file_cache\" parameter \"{p}\""));
    let mut max = None;
    let mut inactive = DEFAULT_OPEN_FILE_CACHE_INACTIVE;
    let mut off = false;
    for a in &d.args {
        if let Some(v) = a.strip_prefix("max=") {
            max = Some(
                parse_number(v)
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad(a))?,
            );
        } else if let Some(v) = a.strip_prefix("inactive=") {
            inactive = parse_time_sec(v).ok_or_else(|| bad(a))?;
        } else if a == "off" {
            off = true;
        } else {
            return Err(bad(a));
        }
    }
    l.open_file_cache = Some(match (off, max) {
        (true, _) => None,
        (false, Some(max)) => Some(OpenFileCacheConf { max, inactive }),
        (false, None) => {
            return Err(msg(
                d,
                "\"open_file_cache\" must have the \"max\" parameter",
            ));
        }
    });
    Ok(())
}

/// nginx takes any `ngx_uint_t`; past `u32::MAX` uses (never reached) the
/// count is clamped rather than refused.
pub fn open_file_cache_min_uses(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.open_file_cache_min_uses, d, || {
        Ok(u32::try_from(number(d)?).unwrap_or(u32::MAX))
    })
}

/// `memory_cache off | [size=N] [max_file=N]` (Peregrine's).
pub fn memory_cache(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    if l.memory_cache.is_some() {
        return Err(duplicate(d));
    }
    if arg(d, 0) == "off" {
        if d.args.len() > 1 {
            return Err(msg(
                d,
                format!("invalid \"memory_cache\" parameter \"{}\"", arg(d, 1)),
            ));
        }
        l.memory_cache = Some(None);
        return Ok(());
    }
    let mut conf = DEFAULT_MEMORY_CACHE;
    for a in &d.args {
        let bad = || msg(d, format!("invalid \"memory_cache\" parameter \"{a}\""));
        if let Some(v) = a.strip_prefix("size=") {
            conf.size = parse_size(v)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(bad)?;
        } else if let Some(v) = a.strip_prefix("max_file=") {
            conf.max_file = parse_size(v)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(bad)?;
        } else {
            return Err(bad());
        }
    }
    l.memory_cache = Some(Some(conf));
    Ok(())
}

pub fn access_log(l: &mut RawLoc, d: &Directive, env: &Env<'_>) -> Result<()> {
    match logs::access_log(d, env)? {
        None => l.access_log_off = true,
        Some(conf) => l.access_log.get_or_insert_with(Vec::new).push(conf),
    }
    Ok(())
}

pub fn gzip_types(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    types_list(&mut l.gzip_types, d);
    Ok(())
}

pub fn gzip_min_length(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.gzip_min_length, d, || {
        parse_buf_size(arg(d, 0)).ok_or_else(|| invalid(d))
    })
}

pub fn gzip_comp_level(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.gzip_comp_level, d, || bounded(d, 1, 9))
}

pub fn gzip_proxied(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let p = l.gzip_proxied.get_or_insert_with(GzipProxied::default);
    for a in &d.args {
        match a.as_str() {
            "off" => *p = GzipProxied::default(),
            "expired" => p.expired = true,
            "no-cache" => p.no_cache = true,
            "no-store" => p.no_store = true,
            "private" => p.private = true,
            "no_last_modified" => p.no_last_modified = true,
            "no_etag" => p.no_etag = true,
            "auth" => p.auth = true,
            "any" => p.any = true,
            _ => return Err(msg(d, format!("invalid value \"{a}\""))),
        }
    }
    Ok(())
}

pub fn gzip_disable(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let (list, msie6) = l.gzip_disable.get_or_insert_with(|| (Vec::new(), false));
    for a in &d.args {
        match a.as_str() {
            "msie6" => *msie6 = true,
            // nginx's "degradation" needs its gzip_disable_degradation, not supported.
            "degradation" => {
                return Err(msg(
                    d,
                    "\"gzip_disable degradation\" is not supported by Peregrine yet",
                ));
            }
            // nginx compiles these regexes caseless.
            re => list.push(compile(re, true, &d.span)?),
        }
    }
    Ok(())
}

pub fn gzip_http_version(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    fresh(&l.gzip_http_version, d)?;
    let v = match arg(d, 0) {
        "1.0" => (1, 0),
        "1.1" => (1, 1),
        v => return Err(msg(d, format!("invalid value \"{v}\""))),
    };
    set(&mut l.gzip_http_version, v, d)
}

pub fn gzip_buffers(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.gzip_buffers, d, || bufs(d))
}

pub fn gzip_static(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.gzip_static, d, || static_mode(d))
}

macro_rules! compress_handlers {
    ($field:ident, $on:ident, $types:ident, $level:ident, $min:ident, $static:ident, $lo:expr, $hi:expr) => {
        pub fn $on(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.$field.on, d, || flag(d))
        }
        pub fn $types(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            types_list(&mut l.$field.types, d);
            Ok(())
        }
        pub fn $level(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.$field.comp_level, d, || bounded(d, $lo, $hi))
        }
        pub fn $min(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.$field.min_length, d, || {
                parse_buf_size(arg(d, 0)).ok_or_else(|| invalid(d))
            })
        }
        pub fn $static(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.$field.static_, d, || static_mode(d))
        }
    };
}

compress_handlers!(
    brotli,
    brotli,
    brotli_types,
    brotli_comp_level,
    brotli_min_length,
    brotli_static,
    0,
    11
);
compress_handlers!(
    zstd,
    zstd,
    zstd_types,
    zstd_comp_level,
    zstd_min_length,
    zstd_static,
    1,
    22
);

pub fn proxy_buffers(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy_buffers, d, || bufs(d))
}

pub fn proxy_busy_buffers_size(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.proxy_busy_buffers_size, d, || size(d, arg(d, 0)))
}

// ---- hints: values checked as nginx checks them, then ignored ----
//
// Each returns whether the directive now counts as set at its level: a
// second one there is "duplicate", as nginx's slot functions say.

pub fn hint_flag(d: &Directive) -> Result<bool> {
    flag(d).map(|_| true)
}

pub fn hint_time(d: &Directive) -> Result<bool> {
    time(d, arg(d, 0)).map(|_| true)
}

/// The `*_hash_max_size` and `*_hash_bucket_size` directives: nginx reads
/// them with `ngx_conf_set_num_slot`, so `1k` is an "invalid number".
pub fn hint_number(d: &Directive) -> Result<bool> {
    number(d).map(|_| true)
}

/// `worker_priority [-+]N` (nginx's `ngx_set_priority`: an optional sign,
/// then `ngx_atoi`; the range is left to setpriority(2)). nginx stores the
/// number in an `int`, so a value whose low 32 bits are all ones
/// (4294967295, 2^63-1) equals `NGX_ERROR` and is refused, and 0 is its
/// "unset" mark: after `worker_priority 0` (or 4294967296) another one is
/// not a duplicate. Both checked with `nginx -t` 1.22.1.
pub fn hint_priority(d: &Directive) -> Result<bool> {
    let v = arg(d, 0);
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    let n = parse_number(digits)
        .filter(|&n| n & 0xFFFF_FFFF != 0xFFFF_FFFF)
        .ok_or_else(|| invalid_number(d))?;
    Ok(n & 0xFFFF_FFFF != 0)
}

/// `*_temp_path path [level1 [level2 [level3]]]` (nginx's
/// `ngx_conf_set_path_slot`): each level is 1 or 2 hex digits of the hashed
/// file name, at most 3 levels.
pub fn hint_temp_path(d: &Directive) -> Result<bool> {
    for level in &d.args[1..] {
        match parse_number(level) {
            Some(1 | 2) => {}
            _ => return Err(msg(d, format!("invalid value \"{level}\""))),
        }
    }
    Ok(true)
}

/// `connection_pool_size` / `request_pool_size` (nginx's
/// `ngx_conf_set_size_slot` with a lower bound): Peregrine allocates per
/// connection and per request from its own pools.
pub fn hint_size(d: &Directive) -> Result<bool> {
    size(d, arg(d, 0)).map(|_| true)
}
