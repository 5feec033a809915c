//! The ground floor, below `model`: small things every layer needs and none owns.

pub mod choice;
pub mod stale;
pub mod text;
