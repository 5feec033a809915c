//! The workspace on disk. Today: crash-safe file replacement, shared by everything that
//! writes files people own.

mod atomic;

pub use atomic::AtomicFile;
