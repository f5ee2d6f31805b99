//! Work spread over the machine's cores, with results in input order.
//!
//! Per-file and per-tool work is independent; [`map`] runs it on scoped
//! threads that take the next item as they finish one, and hands back the
//! results in the order of the items, so callers merge them exactly as a loop
//! would: output never depends on the number of threads or on which finished
//! first.

use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Stack for per-tool work on worker threads: what a main thread gets, for
/// checks and analysis that recurse along nested conditions and schemas.
/// Only the pages used are ever committed.
pub const WORK_STACK: usize = 8 * 1024 * 1024;

/// How many threads to use: `jobs`, or the machine's available parallelism
/// when `jobs` is 0.
pub fn threads(jobs: usize) -> usize {
    if jobs > 0 {
        return jobs;
    }
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// `f` over `items` on up to `threads` threads of `stack` bytes each (the
/// platform's default when `None`); result `i` is `f(i, &items[i])`, or the
/// panic it raised. With one thread or one item (and no `stack` asked for),
/// or no thread to be had, the items run here, one after the other.
pub fn map<T, R, F>(
    items: &[T],
    threads: usize,
    stack: Option<usize>,
    f: F,
) -> Vec<std::thread::Result<R>>
where
    T: Sync,
    R: Send,
    F: Fn(usize, &T) -> R + Sync,
{
    map_with(items, threads, stack, || (), |_, i, item| f(i, item))
}

/// [`map`], where each thread first makes its own state with `init` (a
/// cache that cannot be shared, say) and `f` gets it with every item.
pub fn map_with<T, S, R, I, F>(
    items: &[T],
    threads: usize,
    stack: Option<usize>,
    init: I,
    f: F,
) -> Vec<std::thread::Result<R>>
where
    T: Sync,
    R: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, usize, &T) -> R + Sync,
{
    let run = |state: &mut S, i: usize| catch_unwind(AssertUnwindSafe(|| f(state, i, &items[i])));
    let workers = threads.min(items.len());
    // Work that needs a stack of its own gets a thread even when alone.
    if items.is_empty() || (workers <= 1 && stack.is_none()) {
        let mut state = init();
        return (0..items.len()).map(|i| run(&mut state, i)).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<std::thread::Result<R>>>> =
        Mutex::new((0..items.len()).map(|_| None).collect());
    let work = || {
        let mut state = init();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= items.len() {
                break;
            }
            let result = run(&mut state, i);
            slots.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
        }
    };
    std::thread::scope(|scope| {
        let mut spawned = 0;
        for n in 0..workers {
            let mut builder = std::thread::Builder::new().name(format!("mcp-resolve-{n}"));
            if let Some(bytes) = stack {
                builder = builder.stack_size(bytes);
            }
            if builder.spawn_scoped(scope, work).is_ok() {
                spawned += 1;
            }
        }
        if spawned == 0 {
            work();
        }
    });
    let slots = slots.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut state = None;
    slots
        .into_iter()
        .enumerate()
        // Every index was taken by a worker that stored its result; a slot
        // left empty would mean a worker died outside `f`: run it here.
        .map(|(i, slot)| slot.unwrap_or_else(|| run(state.get_or_insert_with(&init), i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_input_order_for_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        let expected: Vec<u64> = items.iter().map(|x| x * x).collect();
        for threads in [1, 2, 3, 8, 2000] {
            let got: Vec<u64> = map(&items, threads, None, |i, x| {
                assert_eq!(items[i], *x);
                x * x
            })
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
            assert_eq!(got, expected, "{threads} threads");
        }
    }

    #[test]
    fn a_panic_is_returned_for_its_item_only() {
        let items = [1, 2, 3, 4];
        let got = map(&items, 2, None, |_, &x| {
            if x == 3 {
                panic!("three");
            }
            x
        });
        assert!(got[2].is_err());
        let rest: Vec<i32> = [0, 1, 3]
            .iter()
            .map(|&i| *got[i].as_ref().unwrap())
            .collect();
        assert_eq!(rest, [1, 2, 4]);
    }

    #[test]
    fn no_items_no_threads() {
        let got = map(&[] as &[u8], 4, None, |_, _| 1);
        assert!(got.is_empty());
        assert!(threads(0) >= 1);
        assert_eq!(threads(3), 3);
    }
}
