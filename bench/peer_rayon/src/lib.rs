//! The Rayon peer of ws-bench (bench/peer.h): fib, nqueens and the unbalanced tree with
//! `rayon::join`, the way Rayon's users write a fork-join, in a `ThreadPool` of P threads.
//!
//! The computations are those of bench/wl_fib.c, wl_nqueens.c and wl_uts.c: fib joins fib(n-1)
//! (run here) with fib(n-2) (the one a thief can take); nqueens and the tree fork every child.
//! `join` forks two halves, so a node's k children are split in halves down to one child each:
//! k - 1 joins, each one a task that can be stolen (worksteal spawns k). The tree is the one of
//! bench/wl_uts.h, written again in Rust; ws-bench checks its node count and hash sum.

use std::os::raw::{c_int, c_uint, c_void};

// ---- fib ----

fn fib(n: i32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (x, y) = rayon::join(|| fib(n - 1), || fib(n - 2));
    x + y
}

// ---- nqueens ----

/// A partial placement's attacked columns and diagonals, as bitmasks.
#[derive(Clone, Copy, Default)]
struct Placement {
    cols: u32,
    d1: u32,
    d2: u32,
}

fn nqueens(n: i32, row: i32, p: Placement) -> u64 {
    if row == n {
        return 1;
    }
    let mut kids = [Placement::default(); 32];
    let mut k = 0;
    let mut avail = !(p.cols | p.d1 | p.d2) & ((1u32 << n) - 1);
    while avail != 0 {
        let bit = avail & avail.wrapping_neg();
        kids[k] = Placement {
            cols: p.cols | bit,
            d1: (p.d1 | bit) << 1,
            d2: (p.d2 | bit) >> 1,
        };
        k += 1;
        avail &= avail - 1;
    }
    nqueens_kids(n, row + 1, &kids[..k])
}

fn nqueens_kids(n: i32, row: i32, kids: &[Placement]) -> u64 {
    match kids.len() {
        0 => 0,
        1 => nqueens(n, row, kids[0]),
        len => {
            let (a, b) = kids.split_at(len / 2);
            let (x, y) = rayon::join(|| nqueens_kids(n, row, a), || nqueens_kids(n, row, b));
            x + y
        }
    }
}

// ---- the unbalanced tree (bench/wl_uts.h) ----

const UTS_M: usize = 8;
const UTS_Q: u32 = 536334041; // 0.124875 * 2^32: q*m = 0.999
const UTS_ROUNDS: usize = 40;
const UTS_GOLDEN: u64 = 0x9e3779b97f4a7c15;

fn uts_mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d049bb133111eb);
    x ^ (x >> 31)
}

fn uts_hash(mut id: u64) -> u64 {
    for _ in 0..UTS_ROUNDS {
        id = uts_mix64(id);
    }
    id
}

fn uts_kids(h: u64) -> usize {
    if ((h >> 32) as u32) < UTS_Q {
        UTS_M
    } else {
        0
    }
}

fn uts_child(h: u64, i: usize) -> u64 {
    h.wrapping_add(UTS_GOLDEN.wrapping_mul(i as u64 + 1))
}

/// Nodes and hash sum of a subtree.
type Subtree = (u64, u64);

fn uts(id: u64) -> Subtree {
    let h = uts_hash(id);
    let mut kids = [0u64; UTS_M];
    let n = uts_kids(h);
    for (i, kid) in kids.iter_mut().enumerate().take(n) {
        *kid = uts_child(h, i);
    }
    let (nodes, sum) = uts_kids_of(&kids[..n]);
    (1 + nodes, h.wrapping_add(sum))
}

fn uts_kids_of(ids: &[u64]) -> Subtree {
    match ids.len() {
        0 => (0, 0),
        1 => uts(ids[0]),
        len => {
            let (a, b) = ids.split_at(len / 2);
            let (x, y) = rayon::join(|| uts_kids_of(a), || uts_kids_of(b));
            (x.0 + y.0, x.1.wrapping_add(y.1))
        }
    }
}

// ---- the C functions of bench/peer.h ----

/// A C call to make on a pool thread: a function pointer and its argument, which the caller
/// keeps alive until `wb_rayon_run` returns.
struct Call {
    f: extern "C" fn(*mut c_void),
    arg: *mut c_void,
}
unsafe impl Send for Call {}

impl Call {
    fn run(self) {
        (self.f)(self.arg)
    }
}

#[no_mangle]
pub extern "C" fn wb_rayon_create(workers: c_uint) -> *mut c_void {
    match rayon::ThreadPoolBuilder::new()
        .num_threads(workers as usize)
        .build()
    {
        Ok(pool) => Box::into_raw(Box::new(pool)) as *mut c_void,
        Err(_) => std::ptr::null_mut(),
    }
}

/// # Safety
/// `pool` comes from `wb_rayon_create` and is not used again.
#[no_mangle]
pub unsafe extern "C" fn wb_rayon_destroy(pool: *mut c_void) {
    drop(Box::from_raw(pool as *mut rayon::ThreadPool));
}

/// # Safety
/// `pool` comes from `wb_rayon_create`; `f(arg)` may run on another thread.
#[no_mangle]
pub unsafe extern "C" fn wb_rayon_run(
    pool: *mut c_void,
    f: extern "C" fn(*mut c_void),
    arg: *mut c_void,
) {
    let pool = &*(pool as *const rayon::ThreadPool);
    let call = Call { f, arg };
    pool.install(move || call.run());
}

#[no_mangle]
pub extern "C" fn wb_rayon_fib(n: c_int) -> u64 {
    fib(n)
}

#[no_mangle]
pub extern "C" fn wb_rayon_nqueens(n: c_int) -> u64 {
    nqueens(n, 0, Placement::default())
}

/// # Safety
/// `out` points to two u64: the node count and the hash sum.
#[no_mangle]
pub unsafe extern "C" fn wb_rayon_uts(root_kids: c_int, out: *mut u64) {
    let h = uts_hash(1); // uts_root_id()
    let ids: Vec<u64> = (0..root_kids as usize).map(|i| uts_child(h, i)).collect();
    let (nodes, sum) = uts_kids_of(&ids);
    *out = 1 + nodes;
    *out.add(1) = h.wrapping_add(sum);
}
