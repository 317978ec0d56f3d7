//! sluice-core: the native half of Sluice. A DataFusion session that plans each SQL transform
//! once and pushes Arrow batches through it, record codecs, file formats and the Nexmark
//! generator, all behind one C ABI (`abi`, header `include/sluice.h`) that the JVM calls through
//! the Foreign Function & Memory API.

// Every unsafe operation sits in its own `unsafe` block with a `// SAFETY:` justification.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
/// Counting global allocator, for leak tests only (`--features alloc-stats`).
#[cfg(feature = "alloc-stats")]
pub mod alloc_stats;
pub mod avro;
pub mod cdata;
pub mod decode;
pub mod encode;
pub mod error;
pub mod file_io;
mod flat_json;
pub mod functions;
pub mod jni_bridge;
pub mod nexmark;
pub mod side_tables;
pub mod transform;
