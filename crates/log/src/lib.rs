//! peregrine-log (placeholder)
