//! peregrine-tune (placeholder)
