//! peregrine-core (placeholder)
