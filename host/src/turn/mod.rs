//! One turn, live or replayed: spawn, frame stdout into lines (`framer`) and record (`live`, [`recording`]) → reduce
//! (`pipeline`, through the harness's reducer component) → collect (`collect`: counts,
//! caps, stop decisions) → finish (`finish.rs`: the turn record, with the timing maths of
//! `timing.rs`). [`replay`] runs a recording back through the same pipeline, so a
//! recording replays through exactly the code that reduced it live.

pub(crate) mod collect;
pub mod early_stop;
pub(crate) mod finish;
mod framer;
pub(crate) mod live;
pub(crate) mod pipeline;
pub mod recording;
pub mod replay;
mod timing;
