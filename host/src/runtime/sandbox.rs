//! One sandboxed store: the deny-by-default WASI context, the memory limiter, the
//! per-call budget, and turning a failed call into a [`ComponentError`].

use super::{ComponentError, CpuBound, EPOCH_TICK};
use std::path::Path;
use std::time::Duration;
use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{
    FsPerms, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};

/// Bytes of guest stdout/stderr kept; past it the guest's writes fail.
const CAPTURE_BYTES: usize = 64 * 1024;

/// A call's fuel allowance: `base` (wasm instructions, roughly) plus `per_byte` for each
/// byte of input the call receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fuel {
    pub base: u64,
    pub per_byte: u64,
}

/// CPU and memory bounds for a component's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Budget {
    /// Fuel for one call; `None`: the deadline alone bounds the CPU
    /// ([`CpuBound::Deadline`], see [`Budget::cpu`]).
    pub fuel: Option<Fuel>,
    /// Wall-clock limit for one call (counted in epoch ticks, [`EPOCH_TICK`]), before the
    /// per-MiB allowance.
    pub deadline: Duration,
    /// Extra wall-clock time per MiB of input the call receives.
    pub deadline_per_mib: Duration,
    /// Linear memory cap per instance, in bytes.
    pub memory_bytes: usize,
}

impl Budget {
    /// Harness components (launch plan, stream reducer, action translation): bounded by
    /// the deadline alone ([`CpuBound::Deadline`]). 2 s a call plus 1 s per MiB of input:
    /// the Claude Code reducer takes about 10 µs for a typical line and 10 ms per MiB of a
    /// long one (release build), so a reducer stopped by it is looping or a hundred times
    /// too slow, and a loop on a short line stops within 2 s. The stream is reduced as it
    /// arrives: a reducer that is slow on every line but within its deadline delays what
    /// the host sees of the CLI (`TaskResult::host_work_note` says so on a timeout).
    pub(crate) const REDUCER: Budget = Budget {
        fuel: None,
        deadline: Duration::from_secs(2),
        deadline_per_mib: Duration::from_secs(1),
        memory_bytes: 512 << 20,
    };
    /// Graders: one call per criterion, bounded by fuel.
    pub(crate) const GRADER: Budget = Budget {
        fuel: Some(Fuel {
            base: 2_000_000_000,
            per_byte: 100,
        }),
        deadline: Duration::from_secs(30),
        deadline_per_mib: Duration::ZERO,
        memory_bytes: 256 << 20,
    };

    /// What bounds the calls' CPU, and so which engine runs them: fuel when the budget
    /// has any.
    pub(crate) fn cpu(&self) -> CpuBound {
        match self.fuel {
            Some(_) => CpuBound::Fuel,
            None => CpuBound::Deadline,
        }
    }

    /// Fuel for a call that receives `input_bytes` bytes (0 under
    /// [`CpuBound::Deadline`]).
    pub(crate) fn fuel_for(&self, input_bytes: usize) -> u64 {
        self.fuel.map_or(0, |f| {
            f.base
                .saturating_add(f.per_byte.saturating_mul(input_bytes as u64))
        })
    }

    /// How the deadline grows with the input, as a message states it (`2 s + 1 s per
    /// MiB of input`); `None` for a flat deadline.
    pub(crate) fn deadline_rule(&self) -> Option<String> {
        let secs = |d: Duration| {
            let s = d.as_secs_f64();
            if s.fract() == 0.0 {
                format!("{s} s")
            } else {
                format!("{} ms", d.as_millis())
            }
        };
        (!self.deadline_per_mib.is_zero()).then(|| {
            format!(
                "{} + {} per MiB of input",
                secs(self.deadline),
                secs(self.deadline_per_mib)
            )
        })
    }

    /// The wall-clock limit of a call that receives `input_bytes` bytes.
    pub(crate) fn deadline_for(&self, input_bytes: usize) -> Duration {
        let mib = input_bytes as f64 / (1024.0 * 1024.0);
        self.deadline
            .saturating_add(self.deadline_per_mib.mul_f64(mib))
    }
}

/// The data of one sandboxed store.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: MemoryCap,
    stderr: MemoryOutputPipe,
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Enforces the memory cap and remembers that it did, so an allocation failure is
/// reported as such whatever trap the guest turns it into.
struct MemoryCap {
    cap: usize,
    hit: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.cap {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }
}

/// A clock that never moves: components see the Unix epoch and a monotonic zero.
struct FrozenClock;

impl HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// The WASI version whose `monotonic-clock` [`link_wasi`] replaces (the one
/// wasmtime-wasi 48 links; a guest importing an older 0.2.x is served by it).
const WASI_CLOCKS: &str = "wasi:clocks/monotonic-clock@0.2.12";

/// Links WASI (preview 2, sync) into `linker`, with virtual sleeps.
///
/// Design: a component's wall-clock limit ([`Budget::deadline`]) is an epoch deadline,
/// checked only while wasm code runs, so a host call that blocks holds the host on a
/// real timer past it. The sandbox's calls that can block are: a sleep (a `pollable`
/// of `subscribe-duration`/`subscribe-instant`, what `std::thread::sleep` uses), stdin
/// (closed: at end at once), stdout/stderr (memory pipes), the network (refused) and
/// reads of the graders' read-only workspace (the disk's own time). Sleeps are made
/// virtual rather than timed out: the clocks are frozen (a component sees the epoch
/// and a monotonic zero), so a sleep ends at once — a time that never moves cannot
/// be waited for — and the same input still gives the same output. A guest sleeping
/// in a loop burns fuel (a grader) and epoch ticks between sleeps, so fuel and the
/// deadline stop it as any loop. Not bounded: a workspace file that blocks on open (a
/// FIFO an agent left) — the graders' file criteria read regular files.
pub(super) fn link_wasi(linker: &mut wasmtime::component::Linker<HostState>) {
    use wasmtime::component::Resource;
    use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};

    /// A sleep that has already ended.
    struct Elapsed;
    impl Pollable for Elapsed {
        fn ready<'a, 'b>(
            &'a mut self,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'b>>
        where
            'a: 'b,
            Self: 'b,
        {
            Box::pin(std::future::ready(()))
        }
    }
    fn elapsed(table: &mut ResourceTable) -> wasmtime::Result<(Resource<DynPollable>,)> {
        let sleep = table.push(Elapsed)?;
        Ok((subscribe(table, sleep)?,))
    }

    wasmtime_wasi::p2::add_to_linker_sync(linker).expect("WASI links");
    linker.allow_shadowing(true);
    let mut clocks = linker
        .instance(WASI_CLOCKS)
        .expect("wasmtime-wasi links this monotonic clock");
    clocks
        .func_wrap("subscribe-duration", |mut store, (_,): (u64,)| {
            elapsed(&mut store.data_mut().table)
        })
        .expect("subscribe-duration links");
    clocks
        .func_wrap("subscribe-instant", |mut store, (_,): (u64,)| {
            elapsed(&mut store.data_mut().table)
        })
        .expect("subscribe-instant links");
    linker.allow_shadowing(false);
}

/// A new store for one component instance. `workspace` is preopened read-only at
/// `/workspace` (graders only); nothing else is granted.
///
/// `loaded` must have been loaded for the engine of `budget.cpu()` (a harness component by
/// [`super::ComponentCache::harnesses`], a grader by [`super::ComponentCache::global`]);
/// anything else is a bug of the host, and panics here rather than deep in wasmtime.
pub(super) fn new_store(
    loaded: &super::LoadedComponent,
    budget: Budget,
    workspace: Option<&Path>,
) -> Result<Store<HostState>, std::io::Error> {
    assert!(
        wasmtime::Engine::same(loaded.component.engine(), super::engine(budget.cpu())),
        "component `{}` was loaded for another engine than its {:?} budget's",
        loaded.name,
        budget.cpu()
    );
    let stderr = MemoryOutputPipe::new(CAPTURE_BYTES);
    let mut wasi = WasiCtxBuilder::new();
    wasi.stdout(MemoryOutputPipe::new(CAPTURE_BYTES))
        .stderr(stderr.clone())
        .wall_clock(FrozenClock)
        .monotonic_clock(FrozenClock)
        .secure_random(wasmtime_wasi::Deterministic::new(vec![
            0x5e, 0xed, 0x42, 0x17,
        ]))
        .insecure_random(wasmtime_wasi::Deterministic::new(vec![
            0x5e, 0xed, 0x42, 0x17,
        ]))
        .insecure_random_seed(0x5eed)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .socket_addr_check(|_, _| Box::pin(async { false }));
    if let Some(dir) = workspace {
        wasi.preopened_dir(dir, "/workspace", FsPerms::ReadOnly)
            .map_err(std::io::Error::other)?;
    }
    let state = HostState {
        wasi: wasi.build(),
        table: ResourceTable::new(),
        limiter: MemoryCap {
            cap: budget.memory_bytes,
            hit: false,
        },
        stderr,
    };
    let mut store = Store::new(super::engine(budget.cpu()), state);
    store.limiter(|s| &mut s.limiter);
    Ok(store)
}

/// What [`arm`] gave one call: its fuel (0 when not metered) and its deadline (ms), for
/// the error of a call that runs out of either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Armed {
    pub fuel: u64,
    pub deadline_ms: u64,
}

/// Arms the call's CPU bound (fuel when the budget meters it) and its epoch deadline for
/// one call receiving `input_bytes` bytes. The store must be one [`new_store`] made with
/// a budget of the same [`CpuBound`].
pub(super) fn arm(store: &mut Store<HostState>, budget: Budget, input_bytes: usize) -> Armed {
    let fuel = budget.fuel_for(input_bytes);
    if budget.fuel.is_some() {
        store.set_fuel(fuel).expect("fuel metering is on");
    }
    let deadline = budget.deadline_for(input_bytes);
    let ticks = (deadline.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
    store.set_epoch_deadline(ticks);
    Armed {
        fuel,
        deadline_ms: deadline.as_millis() as u64,
    }
}

/// What a trap message gains when the trap is an out-of-bounds memory access.
pub(super) const STACK_OVERFLOW_HINT: &str = " (a stack overflow, e.g. unbounded recursion, reads the \
     same: the guest's stack lives in its linear memory and runs off its bottom)";

/// Classifies a failed call: out of fuel, past the deadline, out of memory, or a trap
/// with the guest's panic message when it printed one.
pub(super) fn classify(
    store: &mut Store<HostState>,
    err: wasmtime::Error,
    component: &str,
    call: &str,
    budget: Budget,
    armed: Armed,
) -> ComponentError {
    let component = component.to_string();
    let call = call.to_string();
    if store.data().limiter.hit {
        return ComponentError::OutOfMemory {
            component,
            call,
            cap_bytes: budget.memory_bytes,
        };
    }
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => ComponentError::OutOfFuel {
            component,
            call,
            fuel: armed.fuel,
        },
        Some(Trap::Interrupt) => ComponentError::Deadline {
            component,
            call,
            deadline_ms: armed.deadline_ms,
            rule: budget.deadline_rule(),
        },
        _ => {
            let stderr = String::from_utf8_lossy(&store.data().stderr.contents()).into_owned();
            let panic = stderr
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(4)
                .collect::<Vec<_>>()
                .join(" | ");
            let mut message = match err.downcast_ref::<Trap>() {
                Some(trap) => trap.to_string(),
                None => err.root_cause().to_string(),
            };
            // A Rust guest keeps its stack in linear memory: deep recursion runs that
            // stack off the bottom of memory and traps as an out-of-bounds access,
            // indistinguishable from any other bad access (the kind stays `trap`).
            if matches!(err.downcast_ref::<Trap>(), Some(Trap::MemoryOutOfBounds)) {
                message += STACK_OVERFLOW_HINT;
            }
            if !panic.is_empty() {
                message = format!("{message}; guest stderr: {panic}");
            }
            ComponentError::Trap {
                component,
                call,
                message,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_budget_has_no_fuel_and_a_deadline_that_grows_with_the_input() {
        let b = Budget::REDUCER;
        assert_eq!(b.cpu(), CpuBound::Deadline);
        assert_eq!(b.fuel_for(64 << 20), 0);
        assert_eq!(b.deadline_for(0), Duration::from_secs(2));
        assert_eq!(b.deadline_for(1 << 20), Duration::from_secs(3));
        assert_eq!(b.deadline_for(64 << 20), Duration::from_secs(66));
        assert_eq!(
            b.deadline_rule().as_deref(),
            Some("2 s + 1 s per MiB of input")
        );
    }

    #[test]
    fn a_grader_budget_meters_fuel_by_input_and_keeps_a_flat_deadline() {
        let b = Budget::GRADER;
        assert_eq!(b.cpu(), CpuBound::Fuel);
        assert_eq!(b.fuel_for(0), 2_000_000_000);
        assert_eq!(b.fuel_for(10), 2_000_001_000);
        assert_eq!(b.deadline_for(64 << 20), Duration::from_secs(30));
        assert_eq!(b.deadline_rule(), None);
    }
}
