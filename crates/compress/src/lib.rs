//! peregrine-compress (placeholder)
