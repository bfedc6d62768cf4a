#!/usr/bin/env python3
"""Writes crates/conf/src/nginx_directives.rs: every directive of nginx's core,
event and http modules (and the `stream` and `mail` blocks), with its contexts,
its number of arguments and its module, read from an nginx source tree.

usage: scripts/nginx-directives.py NGINX_SRC > crates/conf/src/nginx_directives.rs

What it reads:
  * each `ngx_command_t NAME[] = { ... }` array: the directive names and their
    type flags (`NGX_HTTP_LOC_CONF|NGX_CONF_TAKE12` ...), every `#if` branch
    included (Debian's and most builds have threads, file AIO, PCRE, SSL);
  * the `ngx_module_t` that points at the array: its name and type (the same
    bits mean different contexts for core, event and http modules);
  * auto/options and auto/modules: which `./configure` switch builds each
    module and whether it is on by default (`--without-X_module`) or optional
    (`--with-X_module`).
Left out on purpose: the event modules of other systems (kqueue, devpoll,
eventport, iocp: nginx on Linux answers "unknown directive" for theirs too),
and what is inside `stream { }` and `mail { }` (Peregrine refuses the block
itself, so their directives are never read).
Only the facts (names, flags, module names) are written, as Rust data.
"""
import os
import re
import sys

SKIPPED_FILES = {
    'src/event/modules/ngx_kqueue_module.c',
    'src/event/modules/ngx_devpoll_module.c',
    'src/event/modules/ngx_eventport_module.c',
    'src/event/modules/ngx_iocp_module.c',
}

# nginx's context bits, by the module type that gives them their meaning,
# to the names of Peregrine's `ctx` constants.
CTX = {
    'NGX_CORE_MODULE': {'NGX_MAIN_CONF': 'MAIN'},
    'NGX_EVENT_MODULE': {'NGX_EVENT_CONF': 'EVENTS'},
    'NGX_HTTP_MODULE': {
        'NGX_HTTP_MAIN_CONF': 'HTTP',
        'NGX_HTTP_SRV_CONF': 'SERVER',
        'NGX_HTTP_LOC_CONF': 'LOCATION',
        'NGX_HTTP_UPS_CONF': 'UPS',
        'NGX_HTTP_SIF_CONF': 'SIF',
        'NGX_HTTP_LIF_CONF': 'LIF',
        'NGX_HTTP_LMT_CONF': 'LMT',
    },
    'NGX_CONF_MODULE': {'NGX_ANY_CONF': 'ANY'},
}
IGNORED_FLAGS = {'NGX_DIRECT_CONF'}
ARGS = {
    'NGX_CONF_NOARGS': 'NOARGS', 'NGX_CONF_TAKE1': 'TAKE1', 'NGX_CONF_TAKE2': 'TAKE2',
    'NGX_CONF_TAKE3': 'TAKE3', 'NGX_CONF_TAKE4': 'TAKE4', 'NGX_CONF_TAKE5': 'TAKE5',
    'NGX_CONF_TAKE6': 'TAKE6', 'NGX_CONF_TAKE7': 'TAKE7',
    'NGX_CONF_TAKE12': 'TAKE1 | TAKE2', 'NGX_CONF_TAKE13': 'TAKE1 | TAKE3',
    'NGX_CONF_TAKE23': 'TAKE2 | TAKE3', 'NGX_CONF_TAKE123': 'TAKE1 | TAKE2 | TAKE3',
    'NGX_CONF_TAKE1234': 'TAKE1 | TAKE2 | TAKE3 | TAKE4',
    'NGX_CONF_BLOCK': 'BLOCK', 'NGX_CONF_FLAG': 'FLAG', 'NGX_CONF_ANY': 'ANY_ARGS',
    'NGX_CONF_1MORE': 'MORE1', 'NGX_CONF_2MORE': 'MORE2',
}

COMMANDS = re.compile(r'ngx_command_t\s+(\w+)\[\]\s*=\s*\{(.*?)\n\};', re.S)
ENTRY = re.compile(r'\{\s*ngx_string\("([^"]+)"\),\s*([^,]+),', re.S)
MODULE = re.compile(r'ngx_module_t\s+(\w+)\s*=\s*\{(.*?)\};', re.S)


def source_files(root):
    for top in ('src/core', 'src/event', 'src/http', 'src/misc', 'src/stream', 'src/mail'):
        for d, _, files in sorted(os.walk(os.path.join(root, top))):
            for f in sorted(files):
                if f.endswith('.c'):
                    path = os.path.join(d, f)
                    rel = os.path.relpath(path, root)
                    if rel not in SKIPPED_FILES:
                        yield rel, open(path, encoding='latin-1').read()


def modules_of(text):
    """commands array name -> (module name, module type)"""
    out = {}
    for name, body in MODULE.findall(text):
        body = re.sub(r'/\*.*?\*/', '', body, flags=re.S)
        fields = [f.strip() for f in body.split(',')]
        # NGX_MODULE_V1, ctx, commands, type, ...
        out[fields[2]] = (name, fields[3])
    return out


def configure_switches(root):
    """module name -> (switch, 'Default' | 'Optional') from auto/options + auto/modules"""
    options = open(os.path.join(root, 'auto/options')).read()
    defaults = dict(re.findall(r'^(HTTP_\w+)=(YES|NO)$', options, re.M))
    switch = {}
    for flag, var in re.findall(r'--with(?:out)?-(http_\w+_module)\)\s+(HTTP_\w+)=', options):
        switch[var] = flag[:-len('_module')]
    modules = open(os.path.join(root, 'auto/modules')).read()
    out = {}
    # Each module is a block of ngx_module_* settings ended by `. auto/module`;
    # ngx_module_link names the switch's variable.
    for block in modules.split('. auto/module'):
        names = re.findall(r'ngx_module_name="?([\w ]+)"?', block)
        link = re.findall(r'ngx_module_link=\$(HTTP_\w+)', block)
        if names and link and link[-1] in switch:
            var = link[-1]
            kind = 'Default' if defaults.get(var) == 'YES' else 'Optional'
            for n in names[-1].split():
                out[n] = (switch[var], kind)
    return out


def short(module):
    """ngx_http_gzip_filter_module -> http_gzip_filter"""
    return module[len('ngx_'):-len('_module')]


def main(root):
    switches = configure_switches(root)
    rows = []
    modules = []
    for rel, text in source_files(root):
        owners = modules_of(text)
        for array, body in COMMANDS.findall(text):
            if array not in owners:
                continue
            module, mtype = owners[array]
            in_block_only = rel.startswith(('src/stream', 'src/mail'))
            if in_block_only and mtype != 'NGX_CORE_MODULE':
                continue
            if module not in [m for m, _ in modules]:
                modules.append((module, mtype))
            for name, flags in ENTRY.findall(body):
                ctx, args = [], []
                for f in (x.strip() for x in flags.split('|')):
                    if f in IGNORED_FLAGS:
                        continue
                    if f in CTX[mtype]:
                        ctx.append(CTX[mtype][f])
                    elif f in ARGS:
                        args.append(ARGS[f])
                    else:
                        sys.exit(f'{rel}: {name}: unknown flag {f}')
                rows.append((name, ' | '.join(ctx), ' | '.join(args) or '0', short(module)))
    w = sys.stdout.write
    w('//! Every directive of nginx\'s core, event and http modules (and the\n')
    w('//! `stream` and `mail` blocks), as nginx\'s `ngx_command_t` arrays declare\n')
    w('//! them: name, contexts, number of arguments, module. Generated; do not edit:\n')
    w('//! `scripts/nginx-directives.py NGINX_SRC > crates/conf/src/nginx_directives.rs`\n')
    w('//! (that script says what it reads and leaves out). What Peregrine does\n')
    w('//! with each is in `crate::known`.\n\n')
    w('use crate::known::arg::*;\n')
    w('use crate::known::{Build, NginxDirective, NginxModule};\n')
    w('use crate::table::ctx::*;\n\n')
    w('const fn d(name: &\'static str, contexts: u16, args: u16, module: &\'static str) -> NginxDirective {\n')
    w('    NginxDirective { name, contexts, args, module }\n}\n\n')
    w('/// nginx\'s directives, module by module in source order.\n')
    w('pub static DIRECTIVES: &[NginxDirective] = &[\n')
    for name, ctx, args, module in rows:
        w(f'    d("{name}", {ctx}, {args}, "{module}"),\n')
    w('];\n\n')
    w('/// nginx\'s modules that have directives: the `./configure` switch that\n')
    w('/// builds each (`http_gzip` for `--without-http_gzip_module`), if any.\n')
    w('pub static MODULES: &[NginxModule] = &[\n')
    for module, _ in modules:
        sw, kind = switches.get(module, (None, 'Always'))
        sw = f'Some("{sw}")' if sw else 'None'
        w(f'    NginxModule {{ name: "{short(module)}", switch: {sw}, build: Build::{kind} }},\n')
    w('];\n\n')
    w('/// Every module nginx\'s `./configure` can build (auto/modules), with or\n')
    w('/// without directives: the names `load_module` may find.\n')
    w('pub static STOCK_MODULES: &[&str] = &[\n')
    for m in stock_modules(root):
        w(f'    "{short(m)}",\n')
    w('];\n')


def stock_modules(root):
    text = open(os.path.join(root, 'auto/modules')).read()
    out = []
    for names in re.findall(r'ngx_module_name="?([\w ]+)"?', text):
        for n in names.split():
            if n.startswith('ngx_') and n.endswith('_module') and n not in out:
                out.append(n)
    return sorted(out)


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
