//! One line per directive for docs/directives.md: what it does in Peregrine.
//! A directive of the table without a line here is listed with its status
//! only (add a line when adding a row).

pub static DESCRIPTIONS: &[(&str, &str)] = &[
    // limits
    (
        "geo",
        "a variable by the client's network or range (`ranges`), `default`, `delete`, \
         `include`, `proxy`, `proxy_recursive`, `volatile`, or another value's address",
    ),
    (
        "limit_req_zone",
        "a zone of request rates by key (`rate=` r/s or r/m), shared by the workers, \
         bounded by its size (least recently used states evicted)",
    ),
    (
        "limit_req",
        "nginx's leaky bucket on a zone: `burst=`, `nodelay`, `delay=`; a delayed request \
         waits on the worker's timer",
    ),
    ("limit_req_status", "the status of a rejected request (503)"),
    (
        "limit_req_log_level",
        "the level of `limiting requests` lines (delays one lower)",
    ),
    (
        "limit_req_dry_run",
        "counts and logs, rejects and delays nothing",
    ),
    (
        "limit_conn_zone",
        "a zone of requests in flight by key, shared by the workers",
    ),
    (
        "limit_conn",
        "the requests in flight a key may have in a zone (503 over it)",
    ),
    (
        "limit_conn_status",
        "the status of a rejected request (503)",
    ),
    (
        "limit_conn_log_level",
        "the level of `limiting connections` lines",
    ),
    ("limit_conn_dry_run", "counts and logs, rejects nothing"),
    (
        "set_real_ip_from",
        "a trusted proxy (address, CIDR, IPv6, `unix:`, host name) whose client address is taken",
    ),
    (
        "real_ip_header",
        "where the client address is: `X-Real-IP`, `X-Forwarded-For`, or any header",
    ),
    (
        "real_ip_recursive",
        "`X-Forwarded-For` read past every trusted proxy",
    ),
    (
        "limit_except",
        "access rules (`allow`/`deny`, `auth_basic`) for the methods not listed (`GET` brings `HEAD`)",
    ),
    (
        "satisfy",
        "`all`: every access module must allow; `any`: one suffices (`allow`/`deny`, `auth_basic`)",
    ),
    (
        "http2",
        "HTTP/2 for the server's addresses: ALPN `h2` on TLS, h2c by prior knowledge on plain ports (`listen ... http2` too, with nginx's deprecation warning)",
    ),
    (
        "http2_max_concurrent_streams",
        "streams a client may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS)",
    ),
    (
        "http2_chunk_size",
        "checked as nginx checks it; DATA frames are 8k whatever it says (not applied yet)",
    ),
    (
        "http2_body_preread_size",
        "each stream's receive window for a request body",
    ),
    (
        "http2_recv_buffer_size",
        "the size of a read from an HTTP/2 connection",
    ),
    (
        "http2_recv_timeout",
        "obsolete in nginx: accepted with nginx's warning (`client_header_timeout` applies)",
    ),
    (
        "http2_idle_timeout",
        "obsolete in nginx: accepted with nginx's warning (`keepalive_timeout` applies)",
    ),
    (
        "http2_max_field_size",
        "obsolete in nginx: accepted with nginx's warning (`large_client_header_buffers` applies)",
    ),
    (
        "http2_max_header_size",
        "obsolete in nginx: accepted with nginx's warning (`large_client_header_buffers` applies)",
    ),
    (
        "http2_max_requests",
        "obsolete in nginx: accepted with nginx's warning (`keepalive_requests` applies)",
    ),
    (
        "resolver",
        "name servers (`valid=`, `ipv4=`, `ipv6=`) for `proxy_pass` hosts built from variables: A and AAAA over UDP in the worker's loop, cached by TTL; the `upstream` level (`server ... resolve`) is not implemented",
    ),
    (
        "resolver_timeout",
        "how long a lookup may take before nginx's 502 `could not be resolved (110: Operation timed out)`",
    ),
    (
        "auth_delay",
        "how long a 401 waits before it is sent (the worker serves others)",
    ),
    (
        "split_clients",
        "a variable by shares of the MurmurHash2 of a value (A/B testing), as nginx splits",
    ),
    (
        "auth_basic",
        "HTTP Basic authentication's realm (variables; `off`): 401 until the credentials match",
    ),
    (
        "auth_basic_user_file",
        "the htpasswd file, read per request: `$apr1$`, `{PLAIN}`, `{SHA}`, `{SSHA}`, and the \
         system's crypt(3) for DES, `$1$`, `$5$`, `$6$`, `$2y$`",
    ),
    (
        "auth_request",
        "the access check's subrequest (URI; `off`): 2xx lets in, 401 and 403 are the answer \
         (401 with its `WWW-Authenticate`), others 500",
    ),
    (
        "auth_request_set",
        "a variable set from the access check's answer (`$upstream_http_*` and the like)",
    ),
    (
        "allow",
        "lets a client address, CIDR, `unix:` or `all` in (first matching rule decides)",
    ),
    (
        "deny",
        "keeps a client address, CIDR, `unix:` or `all` out: 403, `access forbidden by rule`",
    ),
    (
        "map",
        "a variable looked up from another value: exact keys, `default`, `hostnames` \
         wildcards, `~`/`~*` regexes whose captures the value may use, `include`, `volatile`",
    ),
    (
        "upstream",
        "a group of backend servers (`server` with weight, max_fails, fail_timeout, max_conns, \
         backup, down; `hash`, `ip_hash`, `least_conn`, `random`, `keepalive*`; names resolved \
         at load), balanced per worker for `proxy_pass`",
    ),
    (
        "worker_processes",
        "number of worker threads (`auto`: one per CPU)",
    ),
    (
        "worker_cpu_affinity",
        "pins workers to CPUs (`auto` or masks)",
    ),
    ("worker_rlimit_nofile", "raises `RLIMIT_NOFILE` at start"),
    (
        "worker_shutdown_timeout",
        "how long a graceful stop waits for open connections",
    ),
    ("pid", "the pid file"),
    (
        "daemon",
        "detaches from the terminal (`on`); foreground by default, unlike nginx",
    ),
    (
        "user",
        "the user and group the workers run as, when started as root",
    ),
    (
        "error_log",
        "the error log (file, `stderr`, level); below main: checked, not used",
    ),
    ("include", "reads other files (globs allowed) in place"),
    ("events", "the events block"),
    ("http", "the http block"),
    (
        "stream",
        "the stream block: TCP and UDP proxying (`listen` with `udp`/`proxy_protocol`, `proxy_pass`, `upstream`, `proxy_*` timeouts and `proxy_protocol`, `return`, `allow`/`deny`, `log_format`/`access_log`); its other directives refused by name",
    ),
    (
        "mail",
        "the mail block: the IMAP, POP3 and SMTP proxy (`protocol`, `listen` with `ssl`, `auth_http`, `auth_http_header`, `*_auth`, `*_capabilities`, `starttls`, `proxy_*`, `xclient`, `ssl_*` certificates, protocols and ciphers); its other directives refused by name",
    ),
    ("worker_connections", "connections per worker"),
    ("use", "`epoll` (what Peregrine uses anyway)"),
    ("multi_accept", "accepts every pending connection at once"),
    ("server", "a virtual server"),
    (
        "location",
        "prefix, exact, regex and named locations, nested, as nginx selects them",
    ),
    ("types", "extension to MIME type map"),
    ("listen", "address, port and parameters (see below)"),
    (
        "server_name",
        "exact, wildcard and regex names; `$hostname`",
    ),
    ("log_format", "access log formats, with `escape=`"),
    ("client_header_timeout", "time to read the request head"),
    (
        "client_header_buffer_size",
        "first buffer for the request head",
    ),
    (
        "large_client_header_buffers",
        "limits of a long request line and header lines (414, 400)",
    ),
    ("root", "document root"),
    ("alias", "replaces the location's prefix with a path"),
    ("index", "index files of a directory"),
    ("autoindex", "HTML directory listings"),
    (
        "try_files",
        "tries files, then an URI, a named location or `=code`",
    ),
    ("return", "a status with a text or a redirect"),
    (
        "error_page",
        "pages or redirects for error statuses, `=code`",
    ),
    ("stub_status", "nginx's status page"),
    ("metrics", "Peregrine's Prometheus endpoint"),
    (
        "health_status",
        "Peregrine's health endpoint: 200, 503 once a graceful shutdown began",
    ),
    (
        "shutdown_delay",
        "Peregrine's: QUIT keeps accepting this long, health_status answering 503",
    ),
    (
        "config_watch",
        "Peregrine's: reload when a configuration file changed, checked this often",
    ),
    ("default_type", "MIME type of unknown extensions"),
    (
        "charset",
        "adds `; charset=` to the Content-Type of matching types (variables expanded \
         per request)",
    ),
    (
        "post_action",
        "once the response is sent, its URI or named location runs as an internal \
         redirect whose answer is discarded (a proxied one goes upstream)",
    ),
    ("charset_types", "the types `charset` applies to"),
    ("sendfile", "sendfile(2) for file bodies"),
    ("tcp_nopush", "TCP_CORK with sendfile"),
    ("tcp_nodelay", "TCP_NODELAY on keep-alive connections"),
    (
        "keepalive_timeout",
        "idle keep-alive time and `Keep-Alive: timeout=`",
    ),
    ("keepalive_requests", "requests per keep-alive connection"),
    (
        "reset_timedout_connection",
        "RST instead of FIN for timed-out connections",
    ),
    (
        "client_body_timeout",
        "time between two reads of the request body",
    ),
    ("send_timeout", "time between two writes of the response"),
    ("client_max_body_size", "largest request body (413)"),
    (
        "client_body_in_file_only",
        "request body always in a temporary file (on: kept)",
    ),
    (
        "client_body_buffer_size",
        "request body kept in memory up to it, then a temporary file",
    ),
    (
        "open_file_cache",
        "caches open file descriptors and metadata",
    ),
    (
        "open_file_cache_valid",
        "how long a cached entry is trusted",
    ),
    ("open_file_cache_min_uses", "uses before an entry is kept"),
    ("open_file_cache_errors", "caches lookup errors too"),
    (
        "memory_cache",
        "Peregrine's per-worker cache of small files' bodies and heads (`size=64m max_file=16k` by default)",
    ),
    (
        "access_log",
        "access logs (formats, buffers, `if=`, gzip, syslog is refused)",
    ),
    (
        "ssi",
        "runs SSI commands in responses (whole bodies in memory)",
    ),
    (
        "ssi_silent_errors",
        "no error message in place of a failed command",
    ),
    ("ssi_types", "types besides text/html SSI runs on"),
    ("ssi_value_length", "longest SSI parameter value"),
    (
        "ssi_min_file_chunk",
        "accepted and checked; bodies are filtered whole",
    ),
    ("ssi_last_modified", "keeps Last-Modified and a weak ETag"),
    (
        "ssi_ignore_recycled_buffers",
        "accepted and checked; no effect",
    ),
    (
        "sub_filter",
        "replaces a string in responses (case-insensitive)",
    ),
    ("sub_filter_once", "each string replaced once"),
    (
        "sub_filter_types",
        "types besides text/html sub_filter runs on",
    ),
    (
        "sub_filter_last_modified",
        "keeps Last-Modified and a weak ETag",
    ),
    ("add_before_body", "a subrequest's output before the body"),
    ("add_after_body", "a subrequest's output after the body"),
    (
        "addition_types",
        "types besides text/html the addition runs on",
    ),
    ("gzip", "gzip compression of responses"),
    ("gzip_types", "types gzip compresses"),
    ("gzip_min_length", "smallest Content-Length compressed"),
    ("gzip_comp_level", "compression level 1-9"),
    (
        "gzip_proxied",
        "compression of responses to proxied requests (`Via`)",
    ),
    (
        "gzip_disable",
        "User-Agent regexes (`msie6`) not compressed for",
    ),
    ("gzip_vary", "`Vary: Accept-Encoding`"),
    ("gzip_http_version", "lowest HTTP version compressed for"),
    (
        "gzip_buffers",
        "accepted and checked; compression buffers are Peregrine's own",
    ),
    (
        "gzip_static",
        "serves `file.gz` when it exists (`on`, `always`)",
    ),
    ("brotli", "brotli compression (ngx_brotli's directive)"),
    ("brotli_types", "types brotli compresses"),
    ("brotli_comp_level", "brotli quality 0-11"),
    ("brotli_min_length", "smallest Content-Length compressed"),
    ("brotli_static", "serves `file.br` when it exists"),
    ("zstd", "zstd compression (zstd-nginx-module's directive)"),
    ("zstd_types", "types zstd compresses"),
    ("zstd_comp_level", "zstd level"),
    ("zstd_min_length", "smallest Content-Length compressed"),
    ("zstd_static", "serves `file.zst` when it exists"),
    (
        "proxy_buffers",
        "accepted and checked; the body streams through one buffer",
    ),
    (
        "proxy_busy_buffers_size",
        "accepted and checked; the body streams through one buffer",
    ),
    (
        "load_module",
        "accepted for a module Peregrine has built in and for nginx's own (whose directives are refused by name); other modules refused",
    ),
    // hints
    (
        "accept_mutex",
        "each worker has its own SO_REUSEPORT socket",
    ),
    ("accept_mutex_delay", "no accept mutex"),
    ("worker_priority", "nice value of workers: not set"),
    (
        "timer_resolution",
        "Peregrine's timers have their own resolution",
    ),
    ("master_process", "workers are threads of one process"),
    ("lock_file", "no accept mutex, no lock file"),
    ("working_directory", "nginx uses it only for core files"),
    ("worker_rlimit_core", "core file size: not set"),
    ("debug_points", "nginx's debugging stops"),
    (
        "env",
        "nothing in Peregrine reads the environment but TZ; `env TZ=...` is refused",
    ),
    (
        "pcre_jit",
        "PCRE2 always compiles with its JIT in Peregrine",
    ),
    (
        "thread_pool",
        "pools for `aio threads`; workers do their own file I/O",
    ),
    ("google_perftools_profiles", "a profiler's output"),
    ("epoll_events", "Peregrine sizes its own epoll batches"),
    ("worker_aio_requests", "no Linux AIO"),
    ("debug_connection", "debug logging for some clients"),
    ("aio", "file I/O mode; the bytes sent are the same"),
    ("aio_write", "no temporary files are written"),
    ("directio", "O_DIRECT reads; the bytes sent are the same"),
    ("directio_alignment", "see directio"),
    ("read_ahead", "kernel read-ahead"),
    ("output_buffers", "output buffering of file reads"),
    ("postpone_output", "output buffering"),
    ("subrequest_output_buffer_size", "no subrequests"),
    (
        "client_body_in_single_buffer",
        "a body in memory is one buffer anyway",
    ),
    ("open_file_cache_events", "kqueue only"),
    (
        "keepalive_min_timeout",
        "reuse of idle connections under connection shortage",
    ),
    ("gzip_window", "zlib window; the decoded body is the same"),
    (
        "gzip_hash",
        "zlib memory level; the decoded body is the same",
    ),
    ("postpone_gzipping", "buffering before compression"),
    ("gzip_no_buffer", "nginx reads it and does not use it"),
    ("map_hash_max_size", "hash table sizing"),
    ("map_hash_bucket_size", "hash table sizing"),
    ("rewrite_log", "`rewrite` is refused: nothing to log"),
    (
        "uninitialized_variable_warn",
        "`set` and `if` are refused: nothing to warn of",
    ),
    ("server_names_hash_bucket_size", "hash table sizing"),
    ("server_names_hash_max_size", "hash table sizing"),
    ("types_hash_bucket_size", "hash table sizing"),
    ("types_hash_max_size", "hash table sizing"),
    ("variables_hash_bucket_size", "hash table sizing"),
    ("variables_hash_max_size", "hash table sizing"),
    (
        "client_body_temp_path",
        "where request bodies over the buffer go (with levels)",
    ),
    ("proxy_temp_path", "no temporary files"),
    ("fastcgi_temp_path", "no temporary files"),
    ("uwsgi_temp_path", "no temporary files"),
    ("scgi_temp_path", "no temporary files"),
    ("connection_pool_size", "Peregrine's own allocation"),
    ("request_pool_size", "Peregrine's own allocation"),
    // ssl
    ("ssl_certificate", "PEM chain; several for RSA and ECDSA"),
    (
        "ssl_certificate_key",
        "PEM key of the certificate of the same rank",
    ),
    (
        "ssl_protocols",
        "TLSv1.2 and TLSv1.3 (rustls); older ones dropped with a warning",
    ),
    (
        "ssl_ciphers",
        "OpenSSL's cipher string, onto the suites rustls has",
    ),
    ("ssl_prefer_server_ciphers", "server's suite order first"),
    (
        "ssl_session_cache",
        "off, none, builtin, shared:NAME:SIZE (one cache for all workers)",
    ),
    ("ssl_session_timeout", "session and ticket lifetime"),
    ("ssl_stapling", "responses fetched by a thread of their own"),
    ("ssl_stapling_responder", "http:// only, as nginx"),
    (
        "ssl_stapling_verify",
        "signer: the issuer or its OCSP delegate",
    ),
    (
        "ssl_password_file",
        "passwords of encrypted PKCS #8 keys (PBES2)",
    ),
    ("ssl_session_tickets", "stateless resumption by ticket"),
    // proxy_ssl
    (
        "proxy_ssl_server_name",
        "SNI to the upstream (off by default)",
    ),
    (
        "proxy_ssl_name",
        "the name checked and sent as SNI (`$proxy_host`)",
    ),
    (
        "proxy_ssl_verify",
        "check the upstream's certificate (off: any is taken)",
    ),
    (
        "proxy_ssl_verify_depth",
        "intermediates allowed, as OpenSSL counts",
    ),
    (
        "proxy_ssl_trusted_certificate",
        "the CAs the upstream's chain must reach",
    ),
    (
        "proxy_ssl_crl",
        "revoked certificates of the upstream's chain",
    ),
    ("proxy_ssl_protocols", "TLSv1.2 and TLSv1.3 (rustls)"),
    (
        "proxy_ssl_ciphers",
        "OpenSSL's cipher string, onto rustls's suites",
    ),
    (
        "proxy_ssl_certificate",
        "client certificate (variables: loaded per request)",
    ),
    (
        "proxy_ssl_certificate_key",
        "its key (an encrypted one: PKCS #8, PBES2)",
    ),
    (
        "proxy_ssl_password_file",
        "passwords of an encrypted PKCS #8 key",
    ),
    (
        "proxy_ssl_session_reuse",
        "resumption, one session store per worker",
    ),
    ("proxy_ssl_conf_command", "refused: OpenSSL's commands"),
    // proxy
    (
        "proxy_pass",
        "the location's content handler: an address, a host (all its addresses round robin), \
         an `upstream` group, `unix:/path:`, variables; with a URI part as nginx replaces it; \
         `https://` (rustls, `proxy_ssl_*`)",
    ),
    (
        "proxy_set_header",
        "headers of the upstream request (nginx's defaults `Host $proxy_host`, `Connection close`; \
         \"\" drops one)",
    ),
    (
        "proxy_http_version",
        "1.0 (default) or 1.1 toward the upstream",
    ),
    ("proxy_connect_timeout", "connecting to an upstream"),
    (
        "proxy_send_timeout",
        "between two writes of the request upstream",
    ),
    ("proxy_read_timeout", "between two reads of the answer"),
    (
        "proxy_pass_request_headers",
        "client's headers passed upstream",
    ),
    ("proxy_pass_request_body", "client's body passed upstream"),
    (
        "proxy_set_body",
        "the body sent upstream instead (variables)",
    ),
    (
        "proxy_method",
        "the method sent upstream instead (variables)",
    ),
    (
        "proxy_hide_header",
        "an upstream header not passed to the client",
    ),
    (
        "proxy_pass_header",
        "passes one of the headers hidden by default",
    ),
    (
        "proxy_ignore_headers",
        "X-Accel-* and cache headers not acted upon",
    ),
    (
        "proxy_redirect",
        "rewrites Location and Refresh: default, off, FROM TO",
    ),
    (
        "proxy_cookie_domain",
        "rewrites a Set-Cookie's Domain: off, FROM TO, ~REGEX TO",
    ),
    (
        "proxy_cookie_path",
        "rewrites a Set-Cookie's Path: off, prefix TO, ~REGEX / ~*REGEX TO",
    ),
    (
        "proxy_cookie_flags",
        "sets or removes a cookie's Secure, HttpOnly, SameSite: off, COOKIE FLAG...",
    ),
    (
        "proxy_next_upstream",
        "when to try the next server: error, timeout, invalid_header, http_5xx/403/404/429, \
         non_idempotent, off",
    ),
    (
        "proxy_next_upstream_tries",
        "attempts per request (0: all servers)",
    ),
    (
        "proxy_next_upstream_timeout",
        "time for all attempts (0: no limit)",
    ),
    (
        "proxy_intercept_errors",
        "an upstream status >= 300 answered by `error_page`",
    ),
    (
        "proxy_buffering",
        "accepted; the answer streams to the client as it arrives",
    ),
    (
        "proxy_request_buffering",
        "off: the body streams upstream as it arrives",
    ),
    (
        "proxy_ignore_client_abort",
        "on: a client closing before the answer does not end the upstream request",
    ),
    (
        "proxy_limit_rate",
        "the answer read from the upstream at most this fast (buffered answers; a size, no variables)",
    ),
    ("proxy_buffer_size", "the largest answer head"),
    // cache (proxy_; the gateways' twins alike)
    (
        "proxy_cache_path",
        "a cache directory (`levels`, `keys_zone`, `inactive`, `max_size`): nginx's file \
         layout, a keys zone shared by the workers, files read back at start",
    ),
    (
        "proxy_cache",
        "the zone a location caches in (`off`, a name, variables)",
    ),
    (
        "proxy_cache_key",
        "the key (default `$scheme$proxy_host$request_uri`), its md5 names the file",
    ),
    (
        "proxy_cache_valid",
        "validity by status, after `X-Accel-Expires`, `Cache-Control` and `Expires`",
    ),
    (
        "proxy_cache_methods",
        "POST cached too (GET and HEAD always)",
    ),
    (
        "proxy_cache_min_uses",
        "stored from the Nth request for a key",
    ),
    (
        "proxy_cache_bypass",
        "not taken from the cache (`BYPASS`); stored still",
    ),
    ("proxy_no_cache", "not stored"),
    (
        "proxy_cache_use_stale",
        "the expired answer for an error, timeout or status (`STALE`), or while \
         another request updates it (`UPDATING`)",
    ),
    (
        "proxy_cache_revalidate",
        "an expired answer revalidated with `If-Modified-Since`/`If-None-Match` (`REVALIDATED`)",
    ),
    (
        "proxy_cache_convert_head",
        "a HEAD fills the cache with a GET",
    ),
    (
        "proxy_cache_max_range_offset",
        "accepted; ranges are answered from the whole cached answer",
    ),
    (
        "fastcgi_cache_key",
        "the key; no default (nginx warns): every answer under one key",
    ),
    // gateways: fastcgi, uwsgi, scgi
    (
        "fastcgi_pass",
        "FastCGI to `host:port`, `unix:/path`, an `upstream` group or variables, on the \
         proxy's upstream machinery (balancers, next upstream, timeouts)",
    ),
    (
        "fastcgi_param",
        "a parameter (with variables, `if_not_empty`); a level's own list or its parent's",
    ),
    (
        "fastcgi_index",
        "appended to `$fastcgi_script_name` after a `/`",
    ),
    (
        "fastcgi_split_path_info",
        "`$fastcgi_script_name` and `$fastcgi_path_info` from the regex's two captures",
    ),
    (
        "fastcgi_keep_conn",
        "`FCGI_KEEP_CONN`: the connection back to the group's `keepalive` pool",
    ),
    (
        "fastcgi_catch_stderr",
        "a STDERR text holding it makes the answer invalid (next upstream or 502)",
    ),
    (
        "uwsgi_pass",
        "uwsgi to an address, group or variables (`uwsgi://` optional)",
    ),
    (
        "uwsgi_param",
        "a uwsgi var (with variables, `if_not_empty`)",
    ),
    ("uwsgi_modifier1", "the packet header's first modifier"),
    ("uwsgi_modifier2", "the packet header's second modifier"),
    ("scgi_pass", "SCGI to an address, group or variables"),
    (
        "scgi_param",
        "an SCGI header (with variables, `if_not_empty`)",
    ),
];
