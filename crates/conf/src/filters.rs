//! The merged settings of the body filters nginx builds around
//! subrequests: SSI (`ngx_http_ssi_filter_module`), addition
//! (`ngx_http_addition_filter_module`) and sub (`ngx_http_sub_filter_module`).
//! Read by `crate::build::filters`; run by `peregrine_core::filters`.

/// nginx's `ssi_value_length` default (`NGX_HTTP_SSI_PARAM_LEN`).
pub const DEFAULT_SSI_VALUE_LENGTH: usize = 256;
/// nginx's `ssi_min_file_chunk` default (1k).
pub const DEFAULT_SSI_MIN_FILE_CHUNK: usize = 1024;

/// One `sub_filter STRING REPLACEMENT` (both may hold variables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubPattern {
    pub find: String,
    pub replace: String,
}

/// The filters' settings of one location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FiltersConf {
    /// Any of the filters is on here: the one test a location without
    /// them pays (see `peregrine_core::filters::apply`).
    pub active: bool,
    // ssi
    pub ssi: bool,
    pub ssi_silent_errors: bool,
    /// `ssi_types` besides text/html (`*`: any type).
    pub ssi_types: Vec<String>,
    pub ssi_value_length: usize,
    pub ssi_min_file_chunk: usize,
    pub ssi_last_modified: bool,
    // sub
    pub sub: Vec<SubPattern>,
    pub sub_once: bool,
    pub sub_types: Vec<String>,
    pub sub_last_modified: bool,
    // addition
    pub add_before_body: Option<String>,
    pub add_after_body: Option<String>,
    pub addition_types: Vec<String>,
}

impl Default for FiltersConf {
    fn default() -> Self {
        FiltersConf {
            active: false,
            ssi: false,
            ssi_silent_errors: false,
            ssi_types: Vec::new(),
            ssi_value_length: DEFAULT_SSI_VALUE_LENGTH,
            ssi_min_file_chunk: DEFAULT_SSI_MIN_FILE_CHUNK,
            ssi_last_modified: false,
            sub: Vec::new(),
            sub_once: true,
            sub_types: Vec::new(),
            sub_last_modified: false,
            add_before_body: None,
            add_after_body: None,
            addition_types: Vec::new(),
        }
    }
}

/// Whether `ty` (a Content-Type's media type) is in `types` or is
/// text/html, which nginx's `*_types` always include
/// (`ngx_http_html_default_types`); `*` takes any.
pub fn type_matches(types: &[String], ty: &str) -> bool {
    let ty = ty.split(';').next().unwrap_or("").trim();
    ty.eq_ignore_ascii_case("text/html")
        || types.iter().any(|t| t == "*" || t.eq_ignore_ascii_case(ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_always_take_html() {
        assert!(type_matches(&[], "text/html; charset=utf-8"));
        assert!(!type_matches(&[], "text/plain"));
        assert!(type_matches(&["text/plain".into()], "TEXT/plain"));
        assert!(type_matches(&["*".into()], "image/gif"));
    }
}
