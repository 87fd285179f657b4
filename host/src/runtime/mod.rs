//! The component runtime: one wasmtime [`Engine`] for the process, loading (with an on-disk
//! cache of precompiled components), sandboxed stores, and the typed errors a component's
//! failure becomes.
//!
//! Deny by default: a store starts from an empty WASI context (no env, no args, no
//! preopens, no network, stdin closed, stdout and stderr captured to memory), with frozen
//! clocks and seeded randomness so a component is a pure function of its inputs. Memory
//! is bounded by a per-store cap; CPU by [`CpuBound`]: graders by fuel (deterministic,
//! re-armed before every call) with an epoch deadline as the wall-clock backstop, harness
//! components by the epoch deadline alone (their reducer runs once per stream line, where
//! fuel metering cost about 15% of an end-to-end replay; see [`CpuBound::Deadline`]).

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
pub(crate) use sandbox::{Budget, Fuel, HostState};

use std::sync::{Arc, OnceLock};
use std::time::Duration;
use wasmtime::{Config, Engine};

/// What bounds a component's CPU. Each bound has its own engine (fuel metering is
/// compiled into the code), so a component is loaded for one of them
/// ([`ComponentCache::global`] for graders, [`ComponentCache::harnesses`] for harness
/// components) and runs only on stores of that engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CpuBound {
    /// Fuel, re-armed before every call, with the epoch deadline as a wall-clock
    /// backstop: a call that loops stops at the same instruction on every machine, so a
    /// criterion that runs out of fuel fails the same way on every re-grade. For graders
    /// and live criteria: user-written code, called once per criterion or per event.
    Fuel,
    /// The epoch deadline alone, re-armed before every call and scaled by the call's input
    /// ([`Budget::deadline`] plus [`Budget::deadline_per_mib`]). For harness components,
    /// whose reducer runs once per stream line on the hot path of every live run and
    /// replay: fuel metering (a counter updated in every basic block) cost about 15% of an
    /// end-to-end replay (`cargo bench --bench replay_e2e`). A reducer's output still
    /// depends only on its input: only a call that runs past its deadline (a loop, or work
    /// hundreds of times slower than parsing the line) ends differently by machine, and
    /// that call fails the reducer (`deadline`) on any machine slow enough.
    Deadline,
}

/// How often the epoch ticks; epoch deadlines are counted in these ticks.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// The process-wide engine for `bound`: epoch interruption on, fuel metering for
/// [`CpuBound::Fuel`], and a background thread that ticks its epoch every
/// [`EPOCH_TICK`].
pub(crate) fn engine(bound: CpuBound) -> &'static Engine {
    static FUEL: OnceLock<Engine> = OnceLock::new();
    static DEADLINE: OnceLock<Engine> = OnceLock::new();
    let cell = match bound {
        CpuBound::Fuel => &FUEL,
        CpuBound::Deadline => &DEADLINE,
    };
    cell.get_or_init(|| {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.consume_fuel(bound == CpuBound::Fuel);
        config.epoch_interruption(true);
        config.cranelift_opt_level(wasmtime::OptLevel::Speed);
        // `CODER_EVAL_PROFILE=perfmap` names compiled guest functions for `perf`.
        if std::env::var("CODER_EVAL_PROFILE").as_deref() == Ok("perfmap") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config).expect("the engine configuration is valid");
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name(format!("coder-eval-epoch-{bound:?}").to_lowercase())
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
pub(crate) fn off_runtime<R: Send>(f: impl FnOnce() -> R + Send) -> R {
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
