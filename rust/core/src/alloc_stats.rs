//! Counts the native heap (feature `alloc-stats`, off in the library the engine ships): a global
//! allocator over the system allocator that keeps the bytes and allocations currently live, so
//! tests can prove that work which frees everything it made ends with the heap it started with.
//! The JVM-side leak checks see only Arrow Java's memory and `sluice_live_handles`; this sees
//! what Rust itself allocates (DataFusion, arrow-rs buffers, codecs).
//!
//! Every thread's allocations count: measure with no other thread allocating.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// The system allocator, counting.
pub struct CountingAllocator;

static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);
static LIVE_ALLOCATIONS: AtomicI64 = AtomicI64::new(0);
static TOTAL_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static TOTAL_BYTES: AtomicU64 = AtomicU64::new(0);

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocated(size: usize) {
    LIVE_BYTES.fetch_add(size as i64, Ordering::Relaxed);
    LIVE_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    TOTAL_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    TOTAL_BYTES.fetch_add(size as u64, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to `System`; the counters only observe.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: GlobalAlloc::alloc's contract, which our caller keeps, forwarded unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for alloc.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            allocated(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from System through this allocator with `layout` (caller's contract).
        unsafe { System.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        LIVE_ALLOCATIONS.fetch_sub(1, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for dealloc, plus GlobalAlloc::realloc's rules on `new_size`.
        let new_ptr = unsafe { System.realloc(ptr, layout, new_size) };
        if !new_ptr.is_null() {
            // The block moved or grew in place: still one allocation, of the new size.
            LIVE_BYTES.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
            TOTAL_BYTES.fetch_add(new_size.saturating_sub(layout.size()) as u64, Ordering::Relaxed);
        }
        new_ptr
    }
}

/// A reading of the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocStats {
    /// Bytes allocated and not yet freed (as requested, not as the allocator rounds them).
    pub live_bytes: i64,
    /// Allocations not yet freed.
    pub live_allocations: i64,
    /// Allocations ever made (reallocations not counted).
    pub total_allocations: u64,
    /// Bytes ever allocated, growth by reallocation included.
    pub total_bytes: u64,
}

pub fn stats() -> AllocStats {
    AllocStats {
        live_bytes: LIVE_BYTES.load(Ordering::Relaxed),
        live_allocations: LIVE_ALLOCATIONS.load(Ordering::Relaxed),
        total_allocations: TOTAL_ALLOCATIONS.load(Ordering::Relaxed),
        total_bytes: TOTAL_BYTES.load(Ordering::Relaxed),
    }
}

pub fn live_bytes() -> i64 {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// Writes the native heap's live bytes and live allocations (either pointer may be NULL), so a
/// host-side soak test can check them too. Exported only by builds with `alloc-stats`, and kept
/// out of `include/sluice.h` (whose ABI is the shipped library's).
///
/// # Safety
/// Each pointer is NULL or points to writable memory for one `int64_t`, borrowed for the call.
/// Any thread.
///
/// cbindgen:ignore
#[no_mangle]
pub unsafe extern "C" fn sluice_debug_live_bytes(out_bytes: *mut i64, out_allocations: *mut i64) -> i32 {
    let now = stats();
    // SAFETY: NULL or writable for one i64, by the caller's contract (both).
    if let Some(out) = unsafe { out_bytes.as_mut() } {
        *out = now.live_bytes;
    }
    if let Some(out) = unsafe { out_allocations.as_mut() } {
        *out = now.live_allocations;
    }
    crate::abi::SLUICE_OK
}
