//! peregrine-engine (placeholder)
