//! The ground floor, below `model`: small things every layer needs and none owns — crash-safe
//! file replacement, hashing, located diagnostics, the user's folders, safe text.

pub mod atomic;
pub mod choice;
pub mod diag;
pub mod dirs;
pub mod hash;
pub mod stale;
pub mod template;
pub mod text;
