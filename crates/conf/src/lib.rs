//! peregrine-conf (placeholder)
