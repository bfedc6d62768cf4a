//! The gateway modules' directives (`fastcgi_*`, `uwsgi_*`, `scgi_*`):
//! what they read, how they inherit, and Debian's files loading verbatim.

use super::*;

const FASTCGI_CONF: &str = include_str!("../../../../conf/fastcgi.conf");
const FASTCGI_PARAMS: &str = include_str!("../../../../conf/fastcgi_params");
const FASTCGI_PHP: &str = include_str!("../../../../conf/snippets/fastcgi-php.conf");

fn loc<'a>(s: &'a ServerConf, name: &str) -> &'a LocConf {
    &s.locations
        .iter()
        .find(|l| matches!(&l.matcher, LocationMatch::Prefix { path, .. } if path == name))
        .unwrap_or_else(|| panic!("location {name}"))
        .conf
}

/// Debian's default site's PHP location, with the files this repository
/// ships, as `/etc/nginx` lays them out.
#[test]
fn debian_php_site_loads_with_the_shipped_files() {
    let t = TempPrefix::new();
    t.write(
        "conf/peregrine.conf",
        "events {}\nhttp {\nserver { listen 127.0.0.1:8080; root html;\n\
         location ~ \\.php$ {\n include snippets/fastcgi-php.conf;\n \
         fastcgi_pass unix:/run/php/php8.2-fpm.sock;\n }\n}\n}\n",
    );
    t.write("conf/fastcgi.conf", FASTCGI_CONF);
    t.write("conf/fastcgi_params", FASTCGI_PARAMS);
    t.write("conf/snippets/fastcgi-php.conf", FASTCGI_PHP);
    let c = load(&LoadOptions {
        prefix: t.root().to_path_buf(),
        conf_file: DEFAULT_CONF_FILE.into(),
        globals: None,
    })
    .expect("load");
    let s = only_server(&c);
    let l = &s.locations[0].conf;
    let f = &l.fastcgi;
    assert_eq!(
        f.up.pass.as_ref().map(|p| &p.target),
        Some(&ProxyTarget::Unix("/run/php/php8.2-fpm.sock".into()))
    );
    assert_eq!(f.index.as_deref(), Some("index.php"));
    assert_eq!(
        f.split_path_info.as_ref().map(|r| r.as_str()),
        Some("^(.+?\\.php)(/.*)$")
    );
    // The snippet's PATH_INFO first, then fastcgi.conf's list in order.
    assert_eq!(f.params[0].name, "PATH_INFO");
    assert_eq!(f.params[1].name, "SCRIPT_FILENAME");
    assert_eq!(f.params[1].value, "$document_root$fastcgi_script_name");
    let https = f.params.iter().find(|p| p.name == "HTTPS").expect("HTTPS");
    assert!(https.if_not_empty);
    assert_eq!(
        f.params.len(),
        1 + FASTCGI_CONF.matches("fastcgi_param").count()
    );
}

#[test]
fn params_inherit_only_where_a_level_sets_none() {
    let c = parse(&server(
        "fastcgi_param A 1;\nlocation /x { fastcgi_pass 127.0.0.1:9000; }\n\
         location /y { fastcgi_param B 2 if_not_empty; fastcgi_pass 127.0.0.1:9000; }\n\
         location /z { }",
    ));
    let s = only_server(&c);
    let x = &loc(s, "/x").fastcgi;
    assert_eq!(x.params.len(), 1);
    assert_eq!(x.params[0].name, "A");
    let y = &loc(s, "/y").fastcgi;
    assert_eq!(y.params.len(), 1);
    assert_eq!(
        (y.params[0].name.as_str(), y.params[0].if_not_empty),
        ("B", true)
    );
    // The pass is not inherited: a location without one passes nothing.
    assert!(loc(s, "/z").fastcgi.up.pass.is_none());
}

#[test]
fn upstream_settings_are_the_modules_own() {
    let c = parse(&http(
        "upstream php { server 127.0.0.1:9000; }\nserver {\nfastcgi_read_timeout 5s;\nfastcgi_next_upstream error http_503;\n\
         fastcgi_hide_header X-Powered-By;\nfastcgi_buffering off;\n\
         fastcgi_keep_conn on;\nfastcgi_buffers 16 16k;\nfastcgi_buffer_size 32k;\n\
         uwsgi_modifier1 30;\nscgi_connect_timeout 2s;\n\
         location / { fastcgi_pass php; }\nlocation /u { uwsgi_pass uwsgi://127.0.0.1:3031; }\n\
         location /s { scgi_pass 127.0.0.1:4000; }\n}",
    ));
    let s = only_server(&c);
    let f = &loc(s, "/").fastcgi;
    assert_eq!(f.up.read_timeout, std::time::Duration::from_secs(5));
    assert_eq!(
        f.up.next_upstream,
        crate::model::next::ERROR | crate::model::next::HTTP_503
    );
    assert_eq!(f.up.hide_headers, ["x-powered-by"]);
    assert!(!f.up.buffering);
    assert!(f.keep_conn);
    assert_eq!(f.up.buffer_size, 32 * 1024);
    // The proxy's own settings are untouched by the gateways'.
    let p = &loc(s, "/").proxy;
    assert_eq!(p.read_timeout, std::time::Duration::from_secs(60));
    assert!(p.buffering);
    let u = &loc(s, "/u").uwsgi;
    assert_eq!(u.modifier1, 30);
    assert!(matches!(
        u.up.pass.as_ref().map(|p| &p.target),
        Some(ProxyTarget::Host { port: 3031, .. })
    ));
    let sc = &loc(s, "/s").scgi;
    assert_eq!(sc.up.connect_timeout, std::time::Duration::from_secs(2));
}

#[test]
fn refusals_in_nginx_words() {
    assert_eq!(
        err(&server(
            "location / { fastcgi_pass 127.0.0.1:9000; fastcgi_pass 127.0.0.1:9001; }"
        )),
        "\"fastcgi_pass\" directive is duplicate in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("fastcgi_param A 1 bogus;")),
        "invalid parameter \"bogus\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server(
            "fastcgi_read_timeout 5s;\nfastcgi_read_timeout 6s;"
        )),
        "\"fastcgi_read_timeout\" directive is duplicate in /p/conf/nginx.conf:5"
    );
    assert_eq!(
        err(&server("fastcgi_buffering maybe;")),
        "invalid value \"maybe\" in \"fastcgi_buffering\" directive, it must be \"on\" or \"off\" in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("fastcgi_pass 127.0.0.1:9000;")),
        "\"fastcgi_pass\" directive is not allowed here in /p/conf/nginx.conf:4"
    );
    assert_eq!(
        err(&server("uwsgi_modifier1 300;")),
        "\"uwsgi_modifier1\" directive invalid number in /p/conf/nginx.conf:4"
    );
    assert!(err(&server("fastcgi_cache one;")).contains("fastcgi_cache"));
}
