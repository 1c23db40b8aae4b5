//! The sweep's sorts as stable LSD radix sorts on the total-order bits of an f64.
//!
//! A streaming run's curves hold an event per chunk, so these sorts were the largest part of
//! the end-of-run statistics. A stable LSD radix sort gives exactly the order of the stable
//! comparison sort it replaces: the same keys, ties kept in list order. Below [`SMALL`] and
//! above [`LARGE`] elements the comparison sort is used, which is the same order again.

use std::cmp::Ordering;

/// Below this many elements a comparison sort is cheaper than 2 KiB of digit counts.
const SMALL: usize = 256;

/// Above this many elements (16 MiB) the radix sort's scratch, the whole list again, would
/// raise the end-of-run memory peak of a long run (the decode curve's pieces: 16 bytes a
/// chunk); the stable comparison sort's scratch is half the list.
const LARGE: usize = 1 << 20;

fn by_comparison(n: usize) -> bool {
    !(SMALL..=LARGE).contains(&n)
}

/// `f64::total_cmp`'s order as an unsigned integer order: negative values have all bits
/// flipped (more negative sorts lower), the rest get the sign bit set.
pub(super) fn total_order_bits(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// Sorts (instant, δ) events as AIPerf's sweep does: by instant (`total_cmp`), removals
/// (δ ≤ 0, NaN included) before additions at an equal instant, otherwise list order.
pub(super) fn sort_events(ev: &mut [(f64, f64)]) {
    if by_comparison(ev.len()) {
        ev.sort_by(compare_events);
        return;
    }
    let mut scratch = Vec::with_capacity(ev.len());
    // The least significant "digit" first: a stable split into removals, then additions.
    let removals = ev.iter().filter(|e| !is_addition(e)).count();
    scratch.resize(ev.len(), (0.0, 0.0));
    let (mut r, mut a) = (0, removals);
    for &e in ev.iter() {
        if is_addition(&e) {
            scratch[a] = e;
            a += 1;
        } else {
            scratch[r] = e;
            r += 1;
        }
    }
    ev.copy_from_slice(&scratch);
    radix_by_key(ev, &mut scratch, |e| total_order_bits(e.0));
}

/// Sorts (value, duration) pieces by value (`total_cmp`), ties in list order.
pub(super) fn sort_pieces(p: &mut [(f64, f64)]) {
    if by_comparison(p.len()) {
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        return;
    }
    let mut scratch = vec![(0.0, 0.0); p.len()];
    radix_by_key(p, &mut scratch, |e| total_order_bits(e.0));
}

fn is_addition(e: &(f64, f64)) -> bool {
    e.1 > 0.0
}

/// The comparison the radix sort must agree with.
fn compare_events(a: &(f64, f64), b: &(f64, f64)) -> Ordering {
    a.0.total_cmp(&b.0)
        .then(is_addition(a).cmp(&is_addition(b)))
}

/// Stable LSD radix sort of `v` by `key`, eight 8-bit digits, least significant first. A
/// digit that every element shares moves nothing and is skipped (an instant in ns held as
/// f64 has its low mantissa bytes all zero). `scratch` is `v`'s length.
fn radix_by_key<T: Copy>(v: &mut [T], scratch: &mut [T], key: impl Fn(&T) -> u64) {
    let n = v.len();
    let mut counts = [[0usize; 256]; 8];
    for e in v.iter() {
        let k = key(e);
        for (d, c) in counts.iter_mut().enumerate() {
            c[((k >> (8 * d)) & 0xff) as usize] += 1;
        }
    }
    // Which buffer holds the current order: false = v, true = scratch.
    let mut in_scratch = false;
    for (d, c) in counts.iter().enumerate() {
        if c.contains(&n) {
            continue;
        }
        let mut start = [0usize; 256];
        let mut acc = 0;
        for (s, &x) in start.iter_mut().zip(c.iter()) {
            *s = acc;
            acc += x;
        }
        let (src, dst): (&[T], &mut [T]) = if in_scratch {
            (&*scratch, &mut *v)
        } else {
            (&*v, &mut *scratch)
        };
        for e in src {
            let b = ((key(e) >> (8 * d)) & 0xff) as usize;
            dst[start[b]] = *e;
            start[b] += 1;
        }
        in_scratch = !in_scratch;
    }
    if in_scratch {
        v.copy_from_slice(scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bits(v: &[(f64, f64)]) -> Vec<(u64, u64)> {
        v.iter().map(|e| (e.0.to_bits(), e.1.to_bits())).collect()
    }

    /// Values with many ties, values a few ulps apart (so that every digit decides some
    /// order), and every awkward f64: ±0, ±∞, NaNs of both signs, subnormals.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            (0u64..6).prop_map(|k| k as f64 * 1e9),
            (1u64..3, 0u64..70_000).prop_map(|(b, k)| f64::from_bits((b as f64).to_bits() + k)),
            (1u64..3, 0u64..70_000).prop_map(|(b, k)| -f64::from_bits((b as f64).to_bits() + k)),
            any::<f64>(),
            prop::sample::select(vec![
                0.0,
                -0.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
                -f64::NAN,
                f64::MIN_POSITIVE / 4.0,
                -1.5,
            ]),
        ]
    }

    proptest! {
        #[test]
        fn events_sort_as_the_stable_comparison_sort(
            ev in prop::collection::vec((value(), value()), 0..1200)
        ) {
            let mut want = ev.clone();
            want.sort_by(compare_events);
            let mut got = ev;
            sort_events(&mut got);
            prop_assert_eq!(bits(&got), bits(&want));
        }

        #[test]
        fn pieces_sort_as_the_stable_comparison_sort(
            p in prop::collection::vec((value(), value()), 0..1200)
        ) {
            let mut want = p.clone();
            want.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut got = p;
            sort_pieces(&mut got);
            prop_assert_eq!(bits(&got), bits(&want));
        }
    }

    #[test]
    fn total_order_bits_orders_as_total_cmp() {
        let xs = [
            -f64::NAN,
            f64::NEG_INFINITY,
            -1.0,
            -f64::MIN_POSITIVE / 2.0,
            -0.0,
            0.0,
            f64::MIN_POSITIVE / 2.0,
            1.0,
            f64::INFINITY,
            f64::NAN,
        ];
        for w in xs.windows(2) {
            assert_eq!(w[0].total_cmp(&w[1]), Ordering::Less);
            assert!(total_order_bits(w[0]) < total_order_bits(w[1]), "{w:?}");
        }
    }

    #[test]
    fn ties_keep_list_order_removals_first() {
        // 300 events (over SMALL) at two instants; the δ tag each carries is its list index.
        let ev: Vec<(f64, f64)> = (0..300)
            .map(|i| {
                let t = if i % 3 == 0 { 2.0 } else { 1.0 };
                let d = if i % 2 == 0 {
                    i as f64 + 1.0
                } else {
                    -(i as f64) - 1.0
                };
                (t, d)
            })
            .collect();
        let mut got = ev.clone();
        sort_events(&mut got);
        let mut want: Vec<(f64, f64)> = Vec::new();
        for t in [1.0, 2.0] {
            for add in [false, true] {
                want.extend(ev.iter().filter(|e| e.0 == t && (e.1 > 0.0) == add));
            }
        }
        assert_eq!(got, want);
    }
}
