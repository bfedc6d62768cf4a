//! peregrine-bench (placeholder)
