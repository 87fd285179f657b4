//! The component runtime: one wasmtime [`Engine`] for the process, loading (with an on-disk
//! cache of precompiled components), sandboxed stores, and the typed errors a component's
//! failure becomes.
//!
//! Deny by default: a store starts from an empty WASI context (no env, no args, no
//! preopens, no network, stdin closed, stdout and stderr captured to memory), with frozen
//! clocks and seeded randomness so a component is a pure function of its inputs. CPU is
//! bounded by fuel (deterministic, re-armed before every call) with an epoch deadline as
//! the wall-clock backstop; memory by a per-store cap.

mod cache;
pub(crate) mod contract;
mod error;
pub(crate) mod events;
pub(crate) mod grader;
pub mod grader_v2;
pub mod harness;
mod sandbox;
pub mod translator;
mod verdict;

pub use cache::ComponentCache;
pub use error::ComponentError;
pub use sandbox::{Budget, HostState};

use std::sync::{Arc, OnceLock};
use std::time::Duration;
use wasmtime::{Config, Engine};

/// How often the epoch ticks; epoch deadlines are counted in these ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The process-wide engine: fuel metering and epoch interruption on, and a background
/// thread that ticks the epoch every [`EPOCH_TICK`].
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.consume_fuel(true);
        config.epoch_interruption(true);
        config.cranelift_opt_level(wasmtime::OptLevel::Speed);
        // `CODER_EVAL_PROFILE=perfmap` names compiled guest functions for `perf`.
        if std::env::var("CODER_EVAL_PROFILE").as_deref() == Ok("perfmap") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config).expect("the engine configuration is valid");
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("coder-eval-epoch".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .expect("could not start the epoch thread");
        engine
    })
}

/// Runs a component call `f` where wasmtime-wasi's synchronous host functions can work.
/// They block on tokio internally (`Handle::block_on`), which panics on a tokio worker
/// thread: so on a multi-thread runtime the call leaves the worker (`block_in_place`), on
/// a current-thread runtime it runs on a scoped thread, and outside tokio it runs as is.
/// Every component call of the host goes through here, so callers need not care.
pub fn off_runtime<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        Ok(_) => std::thread::scope(|s| s.spawn(f).join().expect("component call thread")),
        Err(_) => f(),
    }
}

/// A loaded component and the name errors use for it.
#[derive(Clone)]
pub struct LoadedComponent {
    /// A human name: the file path, or `builtin:<name>` for an embedded default.
    pub name: Arc<str>,
    pub component: wasmtime::component::Component,
}
