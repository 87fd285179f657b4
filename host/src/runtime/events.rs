//! The WIT event models (`coder-eval:events/types`, 0.1.0 and 0.2.0) and the host's Rust
//! model ([`harness_kit::Event`]), converted both ways, once per version (`v0_1.rs`,
//! `v0_2.rs`): from WIT for what a reducer returns, to WIT for the trajectory a grader
//! receives. The WIT types are generated here, once per version; the harness and grader
//! bindings of that version reuse them (`with:`), so both sides of the boundary speak the
//! same Rust types.

mod bindings {
    wasmtime::component::bindgen!({
        inline: "
            package coder-eval:host-events;
            world events {
                import coder-eval:events/types@0.1.0;
            }
        ",
        path: "../wit/events@0.1.0",
    });
}

/// The generated WIT event types. `pub` because the harness and grader bindings re-export
/// them (`with:`); the module is private to the crate.
#[allow(unreachable_pub)]
pub use bindings::coder_eval::events::types as wit;

mod bindings_v0_2 {
    wasmtime::component::bindgen!({
        inline: "
            package coder-eval:host-events-v0-2;
            world events {
                import coder-eval:events/types@0.2.0;
            }
        ",
        path: "../wit/events@0.2.0",
    });
}

/// The generated types of `coder-eval:events/types@0.2.0`, for harness@0.2.0 components.
#[allow(unreachable_pub)]
pub use bindings_v0_2::coder_eval::events::types as wit_v0_2;

mod v0_1;
mod v0_2;
pub(crate) use v0_1::{from_wit, to_wit};
pub(crate) use v0_2::{from_wit_v0_2, to_wit_v0_2};
