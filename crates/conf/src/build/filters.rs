//! The directives of the SSI, addition and sub filters (see
//! [`crate::filters`]), as written at one level, and their merge
//! (`ngx_http_ssi_merge_loc_conf`, `ngx_http_addition_merge_conf`,
//! `ngx_http_sub_merge_conf`).

use super::Env;
use super::handlers::{arg, flag, set_with, size};
use super::raw::RawLoc;
use crate::error::Result;
use crate::filters::{FiltersConf, SubPattern};
use crate::syntax::Directive;

/// One level's filter settings as written.
#[derive(Debug, Clone, Default)]
pub struct RawFilters {
    pub ssi: Option<bool>,
    pub ssi_silent_errors: Option<bool>,
    pub ssi_types: Option<Vec<String>>,
    pub ssi_value_length: Option<usize>,
    pub ssi_min_file_chunk: Option<usize>,
    pub ssi_last_modified: Option<bool>,
    pub ssi_ignore_recycled_buffers: Option<bool>,
    pub sub: Option<Vec<SubPattern>>,
    pub sub_once: Option<bool>,
    pub sub_types: Option<Vec<String>>,
    pub sub_last_modified: Option<bool>,
    pub add_before_body: Option<String>,
    pub add_after_body: Option<String>,
    pub addition_types: Option<Vec<String>>,
}

impl RawFilters {
    /// nginx's merges: every setting inherits as a whole.
    pub fn merge(&self, p: &FiltersConf) -> FiltersConf {
        let mut c = FiltersConf {
            active: false,
            ssi: self.ssi.unwrap_or(p.ssi),
            ssi_silent_errors: self.ssi_silent_errors.unwrap_or(p.ssi_silent_errors),
            ssi_types: self
                .ssi_types
                .clone()
                .unwrap_or_else(|| p.ssi_types.clone()),
            ssi_value_length: self.ssi_value_length.unwrap_or(p.ssi_value_length),
            ssi_min_file_chunk: self.ssi_min_file_chunk.unwrap_or(p.ssi_min_file_chunk),
            ssi_last_modified: self.ssi_last_modified.unwrap_or(p.ssi_last_modified),
            sub: self.sub.clone().unwrap_or_else(|| p.sub.clone()),
            sub_once: self.sub_once.unwrap_or(p.sub_once),
            sub_types: self
                .sub_types
                .clone()
                .unwrap_or_else(|| p.sub_types.clone()),
            sub_last_modified: self.sub_last_modified.unwrap_or(p.sub_last_modified),
            add_before_body: self
                .add_before_body
                .clone()
                .or_else(|| p.add_before_body.clone()),
            add_after_body: self
                .add_after_body
                .clone()
                .or_else(|| p.add_after_body.clone()),
            addition_types: self
                .addition_types
                .clone()
                .unwrap_or_else(|| p.addition_types.clone()),
        };
        c.active =
            c.ssi || !c.sub.is_empty() || c.add_before_body.is_some() || c.add_after_body.is_some();
        c
    }
}

/// The static fast path's test: a location with a body filter on never
/// takes a route (its answers are made per request).
pub fn no_body_filters(c: &crate::model::LocConf) -> bool {
    !c.filters.active
}

fn types(slot: &mut Option<Vec<String>>, d: &Directive) {
    let list = slot.get_or_insert_with(Vec::new);
    for a in &d.args {
        let t = a.to_ascii_lowercase();
        if !list.contains(&t) {
            list.push(t);
        }
    }
}

macro_rules! flag_row {
    ($name:ident, $field:ident) => {
        pub fn $name(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
            set_with(&mut l.filters.$field, d, || flag(d))
        }
    };
}

flag_row!(ssi, ssi);
flag_row!(ssi_silent_errors, ssi_silent_errors);
flag_row!(ssi_last_modified, ssi_last_modified);
flag_row!(ssi_ignore_recycled_buffers, ssi_ignore_recycled_buffers);
flag_row!(sub_filter_once, sub_once);
flag_row!(sub_filter_last_modified, sub_last_modified);

pub fn ssi_value_length(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.filters.ssi_value_length, d, || size(d, arg(d, 0)))
}

pub fn ssi_min_file_chunk(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.filters.ssi_min_file_chunk, d, || size(d, arg(d, 0)))
}

pub fn ssi_types(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    types(&mut l.filters.ssi_types, d);
    Ok(())
}

pub fn sub_filter_types(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    types(&mut l.filters.sub_types, d);
    Ok(())
}

pub fn addition_types(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    types(&mut l.filters.addition_types, d);
    Ok(())
}

/// `sub_filter STRING REPLACEMENT`: the patterns of a level add up; the
/// string is matched case-insensitively (nginx lowercases it).
pub fn sub_filter(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    let list = l.filters.sub.get_or_insert_with(Vec::new);
    list.push(SubPattern {
        find: arg(d, 0).to_string(),
        replace: arg(d, 1).to_string(),
    });
    Ok(())
}

pub fn add_before_body(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.filters.add_before_body, d, || {
        Ok(arg(d, 0).to_string())
    })
}

pub fn add_after_body(l: &mut RawLoc, d: &Directive, _: &Env<'_>) -> Result<()> {
    set_with(&mut l.filters.add_after_body, d, || {
        Ok(arg(d, 0).to_string())
    })
}
