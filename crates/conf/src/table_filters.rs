//! The body filters' rows of the directive table (SSI, addition, sub:
//! `crate::build::filters`), searched after [`crate::table::TABLE`]. A
//! location with a filter on never takes the static fast path (its
//! answers are made per request); the rest only shape what a filter does.

use crate::build::Handler;
use crate::build::filters as fl;
use crate::fast::Fast::{self, *};
use crate::table::{Args, Spec, ctx::*};

const ONE: Args = Args::Range(1, 1);
const TWO: Args = Args::Range(2, 2);
const MORE: Args = Args::AtLeast(1);

const fn row(name: &'static str, contexts: u16, args: Args, handler: Handler, fast: Fast) -> Spec {
    Spec {
        name,
        contexts,
        args,
        block: false,
        handler,
        fast,
    }
}

const HSL: u16 = HTTP | SERVER | LOCATION;
const OFF_ROUTE: Fast = When(fl::no_body_filters);

pub static TABLE: &[Spec] = &[
    row("ssi", HSL | LIF, ONE, Handler::Loc(fl::ssi), OFF_ROUTE),
    row(
        "ssi_silent_errors",
        HSL,
        ONE,
        Handler::Loc(fl::ssi_silent_errors),
        Neutral,
    ),
    row("ssi_types", HSL, MORE, Handler::Loc(fl::ssi_types), Neutral),
    row(
        "ssi_value_length",
        HSL,
        ONE,
        Handler::Loc(fl::ssi_value_length),
        Neutral,
    ),
    row(
        "ssi_min_file_chunk",
        HSL,
        ONE,
        Handler::Loc(fl::ssi_min_file_chunk),
        Neutral,
    ),
    row(
        "ssi_last_modified",
        HSL,
        ONE,
        Handler::Loc(fl::ssi_last_modified),
        Neutral,
    ),
    // Accepted and unused: the filter works on whole bodies, never on
    // recycled buffers.
    row(
        "ssi_ignore_recycled_buffers",
        HSL,
        ONE,
        Handler::Loc(fl::ssi_ignore_recycled_buffers),
        Neutral,
    ),
    row(
        "sub_filter",
        HSL,
        TWO,
        Handler::Loc(fl::sub_filter),
        OFF_ROUTE,
    ),
    row(
        "sub_filter_once",
        HSL,
        ONE,
        Handler::Loc(fl::sub_filter_once),
        Neutral,
    ),
    row(
        "sub_filter_types",
        HSL,
        MORE,
        Handler::Loc(fl::sub_filter_types),
        Neutral,
    ),
    row(
        "sub_filter_last_modified",
        HSL,
        ONE,
        Handler::Loc(fl::sub_filter_last_modified),
        Neutral,
    ),
    row(
        "add_before_body",
        HSL,
        ONE,
        Handler::Loc(fl::add_before_body),
        OFF_ROUTE,
    ),
    row(
        "add_after_body",
        HSL,
        ONE,
        Handler::Loc(fl::add_after_body),
        OFF_ROUTE,
    ),
    row(
        "addition_types",
        HSL,
        MORE,
        Handler::Loc(fl::addition_types),
        Neutral,
    ),
];
