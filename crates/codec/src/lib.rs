//! peregrine-codec (placeholder)
