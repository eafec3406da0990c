// SPDX-License-Identifier: GPL-2.0

//! `module!` across kernels: 7.2 takes `authors: [..]`, 6.12 `author:`.

/// Declares the module with one author, in whichever form the kernel's
/// `module!` takes.
#[cfg(dmn_module_authors)]
#[macro_export]
macro_rules! kernel_module {
    (type: $t:tt, name: $n:tt, author: $a:tt, description: $d:tt, license: $l:tt $(,)?) => {
        ::kernel::prelude::module! {
            type: $t,
            name: $n,
            authors: [$a],
            description: $d,
            license: $l,
        }
    };
}

/// Declares the module with one author, in whichever form the kernel's
/// `module!` takes.
#[cfg(not(dmn_module_authors))]
#[macro_export]
macro_rules! kernel_module {
    (type: $t:tt, name: $n:tt, author: $a:tt, description: $d:tt, license: $l:tt $(,)?) => {
        ::kernel::prelude::module! {
            type: $t,
            name: $n,
            author: $a,
            description: $d,
            license: $l,
        }
    };
}
