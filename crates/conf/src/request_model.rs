//! The typed settings of nginx's request-processing directives of the http
//! core and charset modules (`merge_slashes`, `log_not_found`, `internal`,
//! the redirect directives, `max_ranges`, `msie_*`, `disable_symlinks`,
//! `source_charset`, `override_charset`, `autoindex_format`) and the
//! `charset_map` tables. Re-exported from [`crate::model`].

/// Location-level settings of these directives, merged (see
/// `build::request::RawRequest`). Defaults are nginx's ([`Default`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestConf {
    /// `log_not_found` (default on): a missing file is logged at `error`.
    pub log_not_found: bool,
    /// `log_subrequest` (default off): accepted; Peregrine makes no
    /// subrequests, so it has nothing to log either way.
    pub log_subrequest: bool,
    /// `internal`: only internal redirects (index, try_files, error_page)
    /// reach the location; a request's own URI gets 404. Not inherited.
    pub internal: bool,
    /// `absolute_redirect` (default on): the `Location` of nginx's own
    /// redirects is `http://host[:port]/path`; off: the path alone.
    pub absolute_redirect: bool,
    /// `port_in_redirect` (default on): the port in that URL.
    pub port_in_redirect: bool,
    /// `server_name_in_redirect` (default off): the host is the server's
    /// first name instead of the request's `Host`.
    pub server_name_in_redirect: bool,
    /// `max_ranges N` (default unlimited): more ranges than N are ignored
    /// (the whole file is sent); 0 turns ranges off.
    pub max_ranges: Option<u32>,
    /// `msie_padding` (default on): error pages for MSIE get padding.
    pub msie_padding: bool,
    /// `msie_refresh` (default off): MSIE gets a `Refresh` page instead of
    /// a redirect.
    pub msie_refresh: bool,
    pub disable_symlinks: DisableSymlinks,
    /// `source_charset` (default none): the charset of the files, recoded
    /// to `charset` through a `charset_map`.
    pub source_charset: Option<String>,
    /// `override_charset` (default off): accepted; only matters for
    /// proxied responses that carry their own charset.
    pub override_charset: bool,
    pub autoindex_format: AutoindexFormat,
    /// `post_action URI|@name` (default none): once the response is sent,
    /// the URI (or named location) runs as an internal redirect whose
    /// answer nobody reads (`ngx_http_post_action`).
    pub post_action: Option<String>,
}

impl Default for RequestConf {
    fn default() -> Self {
        RequestConf {
            log_not_found: true,
            log_subrequest: false,
            internal: false,
            absolute_redirect: true,
            port_in_redirect: true,
            server_name_in_redirect: false,
            max_ranges: None,
            msie_padding: true,
            msie_refresh: false,
            disable_symlinks: DisableSymlinks::default(),
            source_charset: None,
            override_charset: false,
            autoindex_format: AutoindexFormat::Html,
            post_action: None,
        }
    }
}

/// `disable_symlinks off | on | if_not_owner [from=PART]`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DisableSymlinks {
    pub mode: SymlinkMode,
    /// `from=PART`: the leading part of the path not checked (`$document_root`
    /// is kept verbatim and expanded per request).
    pub from: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SymlinkMode {
    #[default]
    Off,
    On,
    IfNotOwner,
}

/// `autoindex_format html | xml | json | jsonp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AutoindexFormat {
    #[default]
    Html,
    Xml,
    Json,
    Jsonp,
}

/// One `charset_map FROM TO { ... }`: what each byte of `from` becomes in
/// `to` (one byte, or its UTF-8 sequence when `to` is utf-8). Bytes below
/// 0x80 map to themselves and unmapped bytes to `?`, as nginx fills its
/// tables before reading the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CharsetMap {
    pub from: String,
    pub to: String,
    /// `to` is utf-8 (only the second column may be, as in nginx).
    pub to_utf8: bool,
    /// 256 entries, indexed by the byte of `from`.
    pub forward: Vec<Vec<u8>>,
    /// The bytes the block maps explicitly (the reverse table is built from
    /// these alone: nginx's `dst2src` knows no others above 0x7f).
    pub mapped: Vec<u8>,
}

impl CharsetMap {
    /// The table before the block's lines (`ngx_http_charset_map_block`).
    pub fn new(from: &str, to: &str) -> CharsetMap {
        let forward = (0..=255u8)
            .map(|b| if b < 0x80 { vec![b] } else { vec![b'?'] })
            .collect();
        CharsetMap {
            from: from.to_string(),
            to: to.to_string(),
            to_utf8: to.eq_ignore_ascii_case("utf-8"),
            forward,
            mapped: Vec::new(),
        }
    }
}
