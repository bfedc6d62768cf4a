//! The crate's error type.

/// Why an encoder could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum CompressError {
    #[error("{coding} compression level {level} is outside {min}..={max}")]
    Level {
        coding: &'static str,
        level: i32,
        min: i32,
        max: i32,
    },
    #[error("deflate failed: {0}")]
    Deflate(&'static str),
    #[error("brotli encoder failed")]
    Brotli,
    #[error("zstd encoder failed: {0}")]
    Zstd(String),
    #[error("the encoder has already finished its stream")]
    Finished,
}
