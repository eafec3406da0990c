// SPDX-License-Identifier: GPL-2.0

//! KUnit suites and cases declared in Rust.
//!
//! 6.12 has no `#[kunit_tests]`: [`kunit_suite!`] builds the C `kunit_suite`
//! and its case array as statics and puts a pointer to the suite in the
//! `.kunit_test_suites` section, which KUnit runs when the module loads,
//! exactly like C's `kunit_test_suite()`. Cases take a [`Test`] and report
//! failures with [`kunit_expect!`] and [`kunit_expect_eq!`]. Their frames
//! are skbs of known bytes ([`SkBuff::test_frame`]), built into every module
//! (only the suites call them).

use super::{bindings, skb::SkBuff};
use core::{fmt, ptr::NonNull};
use kernel::{page::Page, prelude::*};

/// The KUnit test context a case runs in.
///
/// # Invariants
///
/// `ptr` points to the live `struct kunit` of the case being run.
pub(crate) struct Test {
    ptr: NonNull<bindings::kunit>,
}

impl Test {
    /// Wraps the context KUnit passes to a case.
    ///
    /// # Safety
    ///
    /// `ptr` must be the `struct kunit` KUnit passed to the running case, and the
    /// returned value must not outlive that case.
    pub(crate) unsafe fn from_raw(ptr: *mut bindings::kunit) -> Option<Self> {
        // INVARIANT: the caller guarantees `ptr` is the running case's context.
        NonNull::new(ptr).map(|ptr| Self { ptr })
    }

    /// Marks the case failed with a message; the case goes on running.
    pub(crate) fn fail(&self, args: fmt::Arguments<'_>) {
        // SAFETY: `self.ptr` is the running case's context (type invariant), and the
        // `%pA` format of the helper takes a pointer to `fmt::Arguments`, which lives
        // until the call returns.
        unsafe { bindings::dmn_kunit_fail(self.ptr.as_ptr(), core::ptr::from_ref(&args).cast()) };
    }
}

impl SkBuff {
    /// A new skb whose linear part holds `len` zeroes, which `fill` writes.
    fn alloc_linear(len: u32, fill: impl FnOnce(&mut [u8])) -> Result<SkBuff> {
        // SAFETY: plain allocation, what the static inline `alloc_skb()` calls.
        let raw = unsafe {
            bindings::__alloc_skb(len, kernel::bindings::GFP_KERNEL, 0, bindings::NUMA_NO_NODE)
        };
        if raw.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: a fresh skb we own.
        let skb = unsafe { SkBuff::from_raw(raw) };
        // SAFETY: the skb is ours, with room for `len` bytes.
        let data = unsafe { bindings::skb_put(raw, len) }.cast::<u8>();
        // SAFETY: the `len` bytes just put, ours while we own the skb: zeroed,
        // then lent to `fill`.
        fill(unsafe {
            data.write_bytes(0, len as usize);
            core::slice::from_raw_parts_mut(data, len as usize)
        });
        Ok(skb)
    }

    /// A zeroed broadcast Ethernet frame of `len` bytes (ethertype 0x88b5,
    /// local experimental), for exercising rings.
    pub(crate) fn test_frame(len: u32) -> Result<SkBuff> {
        if len < bindings::ETH_HLEN {
            return Err(ENOMEM);
        }
        Self::alloc_linear(len, |data| {
            data[..6].fill(0xff);
            data[12] = 0x88;
            data[13] = 0xb5;
        })
    }

    /// A frame of `head` linear bytes and `nr` page frags of `frag_len`
    /// bytes, each at offset 100 of its own page; byte k is `(k * 7) % 251`.
    pub(crate) fn test_frame_with_frags(head: u32, nr: u32, frag_len: u32) -> Result<SkBuff> {
        const FRAG_OFF: usize = 100;
        let page_size = kernel::page::PAGE_SIZE;
        if head < bindings::ETH_HLEN
            || nr > bindings::MAX_SKB_FRAGS
            || frag_len as usize > page_size - FRAG_OFF
        {
            return Err(ENOMEM);
        }
        let mut pos = 0u32;
        let mut next = || {
            let b = (pos.wrapping_mul(7) % 251) as u8;
            pos = pos.wrapping_add(1);
            b
        };
        let skb = Self::alloc_linear(head, |data| data.iter_mut().for_each(|b| *b = next()))?;
        for i in 0..nr {
            let page = Page::alloc_page(GFP_KERNEL)?;
            let mut chunk = [0u8; 64];
            let mut done = 0;
            while done < frag_len as usize {
                let n = chunk.len().min(frag_len as usize - done);
                chunk[..n].iter_mut().for_each(|b| *b = next());
                // SAFETY: `chunk` holds `n` bytes; the page is ours alone.
                unsafe { page.write_raw(chunk.as_ptr(), FRAG_OFF + done, n)? };
                done += n;
            }
            // SAFETY: the skb is ours and has room for frag `i`; the page's
            // reference moves into the skb (which puts it when freed).
            unsafe {
                bindings::dmn_skb_add_page_frag(
                    skb.as_ptr(),
                    i,
                    page.as_ptr().cast(),
                    FRAG_OFF as u32,
                    frag_len,
                    page_size as u32,
                )
            };
            core::mem::forget(page);
        }
        Ok(skb)
    }
}

/// Builds a `struct kunit_case` in a constant context.
#[doc(hidden)]
pub(crate) const fn case(
    name: &'static core::ffi::CStr,
    run: unsafe extern "C" fn(*mut bindings::kunit),
    module: &'static core::ffi::CStr,
) -> bindings::kunit_case {
    // SAFETY: `kunit_case` is plain data for which all-zeroes is the C initialiser.
    let mut case: bindings::kunit_case = unsafe { core::mem::zeroed() };
    case.run_case = Some(run);
    // (The bytes' pointer: `CStr::as_ptr` yields a signed `c_char`, which the
    // kernel's lints refuse.)
    case.name = name.to_bytes_with_nul().as_ptr().cast();
    case.module_name = module.to_bytes_with_nul().as_ptr().cast_mut().cast();
    case
}

/// The zero case that ends a case array.
#[doc(hidden)]
pub(crate) const fn case_end() -> bindings::kunit_case {
    // SAFETY: all-zeroes is the terminator KUnit looks for.
    unsafe { core::mem::zeroed() }
}

/// Builds a `struct kunit_suite` in a constant context.
#[doc(hidden)]
pub(crate) const fn suite(name: &str, cases: *mut bindings::kunit_case) -> bindings::kunit_suite {
    // SAFETY: `kunit_suite` is plain data for which all-zeroes is the C initialiser.
    let mut suite: bindings::kunit_suite = unsafe { core::mem::zeroed() };
    let bytes = name.as_bytes();
    assert!(bytes.len() < suite.name.len(), "suite name too long");
    let mut i = 0;
    while i < bytes.len() {
        suite.name[i] = bytes[i] as kernel::ffi::c_char;
        i += 1;
    }
    suite.test_cases = cases;
    suite
}

/// Declares a KUnit suite of `fn(&mut Test)` cases, run when the module loads.
///
/// The cases are reported under the crate's `MODULE_NAME` (a `&CStr` at the
/// crate root, the name `module!` gives).
/// `kunit_suite!(glue_module, "suite_name", [case_a, case_b]);` generates a module
/// `glue_module` holding the C glue; each case is a function in the calling module.
#[macro_export]
macro_rules! kunit_suite {
    ($glue:ident, $name:literal, [$($case:ident),+ $(,)?]) => {
        #[doc(hidden)]
        mod $glue {
            use $crate::abstractions::bindings;

            $(
                /// KUnit's entry point for the case of the same name.
                ///
                /// # Safety
                ///
                /// Only KUnit calls this, with the context of the running case.
                unsafe extern "C" fn $case(raw: *mut bindings::kunit) {
                    // SAFETY: KUnit passes the context of this running case, and `test`
                    // is dropped before the case returns.
                    if let Some(mut test) = unsafe { $crate::abstractions::kunit::Test::from_raw(raw) } {
                        super::$case(&mut test);
                    }
                }
            )+

            static mut CASES: [bindings::kunit_case; [$(stringify!($case)),+].len() + 1] = [
                $($crate::abstractions::kunit::case(
                    match core::ffi::CStr::from_bytes_with_nul(
                        concat!(stringify!($case), "\0").as_bytes(),
                    ) {
                        Ok(name) => name,
                        Err(_) => panic!("case name"),
                    },
                    $case,
                    $crate::MODULE_NAME,
                ),)+
                $crate::abstractions::kunit::case_end(),
            ];

            static mut SUITE: bindings::kunit_suite =
                $crate::abstractions::kunit::suite($name, (&raw mut CASES).cast::<bindings::kunit_case>());

            // What C's `kunit_test_suite()` emits: KUnit finds the suite here when the
            // module goes live and owns the statics above while it runs them.
            #[used]
            #[link_section = ".kunit_test_suites"]
            static mut SUITE_PTR: *mut bindings::kunit_suite = &raw mut SUITE;
        }
    };
}

/// Fails the case unless `cond` holds; the case goes on.
#[macro_export]
macro_rules! kunit_expect {
    ($test:expr, $cond:expr $(,)?) => {
        if !$cond {
            $test.fail(format_args!(
                "{}:{}: expected {}",
                file!(),
                line!(),
                stringify!($cond)
            ));
        }
    };
}

/// Fails the case unless `left == right`, printing both; the case goes on.
#[macro_export]
macro_rules! kunit_expect_eq {
    ($test:expr, $left:expr, $right:expr $(,)?) => {
        match (&$left, &$right) {
            (l, r) => {
                if l != r {
                    $test.fail(format_args!(
                        "{}:{}: expected {} == {}, got {:#x?} != {:#x?}",
                        file!(),
                        line!(),
                        stringify!($left),
                        stringify!($right),
                        l,
                        r
                    ));
                }
            }
        }
    };
}
