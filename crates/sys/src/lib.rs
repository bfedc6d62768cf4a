//! peregrine-sys (placeholder)
