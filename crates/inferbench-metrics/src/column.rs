//! A column of f64 values kept compactly, losslessly, while a run folds.
//!
//! Exact statistics need every value of a metric, so a run keeps one column per metric for
//! its whole length (docs/architecture.md, "Memory"). Most values are integers: ns
//! durations, token counts, byte counts, chunk gaps. Such a value is stored as a LEB128
//! varint (a 50 ms duration in 4 bytes, a token count in 1 or 2, a zero in 1) instead of 8
//! bytes; any other value (a fraction, a negative number, −0.0, NaN, ∞, above 2⁵³) is stored
//! as a 1-byte marker and its 8 raw bytes. Decoding gives back every value bit for bit, in
//! push order: the statistics are computed on the decoded values exactly as before.

/// Values in push order, encoded (module docs).
#[derive(Clone, Debug, Default)]
pub struct Column {
    bytes: Vec<u8>,
    len: usize,
    /// Where the last [`Column::extend`] (or push) began, for [`Column::last_batch`].
    last_start: usize,
    last_len: usize,
}

/// Integers up to 2⁵³ are exact in f64; larger ones are stored raw.
const MAX_INT: f64 = 9_007_199_254_740_992.0;

impl Column {
    pub fn new() -> Self {
        Column::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held (the encoding, without the vector's spare capacity).
    pub fn encoded_bytes(&self) -> usize {
        self.bytes.len()
    }

    fn put(&mut self, v: f64) {
        let int = (0.0..=MAX_INT).contains(&v) && v.fract() == 0.0;
        // `to_bits` also tells −0.0 (stored raw) from 0.0.
        if int && (v as u64 as f64).to_bits() == v.to_bits() {
            let mut x = (v as u64) << 1;
            loop {
                let b = (x & 0x7f) as u8;
                x >>= 7;
                if x == 0 {
                    self.bytes.push(b);
                    break;
                }
                self.bytes.push(b | 0x80);
            }
        } else {
            // Varint 1: "raw follows".
            self.bytes.push(1);
            self.bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        self.len += 1;
    }

    pub fn push(&mut self, v: f64) {
        self.last_start = self.bytes.len();
        self.last_len = 0;
        self.put(v);
        self.last_len = 1;
    }

    pub fn extend(&mut self, vs: impl IntoIterator<Item = f64>) {
        self.last_start = self.bytes.len();
        let before = self.len;
        for v in vs {
            self.put(v);
        }
        self.last_len = self.len - before;
    }

    /// The encoding (module docs), for readers that walk it in step with other data.
    pub(crate) fn encoded(&self) -> &[u8] {
        &self.bytes
    }

    /// Every value, in push order.
    pub fn iter(&self) -> ColumnIter<'_> {
        ColumnIter {
            bytes: &self.bytes,
            at: 0,
        }
    }

    pub fn to_vec(&self) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.len);
        v.extend(self.iter());
        v
    }

    /// The values of the last push or extend.
    pub fn last_batch(&self) -> Vec<f64> {
        ColumnIter {
            bytes: &self.bytes,
            at: self.last_start,
        }
        .take(self.last_len)
        .collect()
    }
}

impl Extend<f64> for Column {
    fn extend<T: IntoIterator<Item = f64>>(&mut self, iter: T) {
        Column::extend(self, iter)
    }
}

impl FromIterator<f64> for Column {
    fn from_iter<T: IntoIterator<Item = f64>>(iter: T) -> Self {
        let mut c = Column::new();
        c.extend(iter);
        c
    }
}

/// Where the `n` values encoded from `at` end (past the end of `bytes` when they are cut
/// short).
pub(crate) fn skip(bytes: &[u8], mut at: usize, n: usize) -> usize {
    for _ in 0..n {
        let mut x: u64 = 0;
        let mut shift = 0u32;
        loop {
            let Some(&b) = bytes.get(at) else {
                return bytes.len() + 1;
            };
            at += 1;
            if shift < 64 {
                x |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        if x & 1 == 1 {
            at += 8;
        }
    }
    at
}

/// The values encoded in `bytes` (a run of whole values of a [`Column`]'s encoding).
pub(crate) fn decode(bytes: &[u8]) -> ColumnIter<'_> {
    ColumnIter { bytes, at: 0 }
}

/// Decodes a [`Column`] front to back.
pub struct ColumnIter<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Iterator for ColumnIter<'_> {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        let mut x: u64 = 0;
        let mut shift = 0;
        loop {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            x |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        if x & 1 == 0 {
            return Some((x >> 1) as f64);
        }
        let raw = self.bytes.get(self.at..self.at + 8)?;
        self.at += 8;
        Some(f64::from_bits(u64::from_le_bytes(raw.try_into().ok()?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes_by_hand() {
        let mut c = Column::new();
        // 0 → varint 0: one byte. 63 → 126: one byte. 64 → 128: two bytes.
        c.push(0.0);
        assert_eq!(c.encoded_bytes(), 1);
        c.push(63.0);
        assert_eq!(c.encoded_bytes(), 2);
        c.push(64.0);
        assert_eq!(c.encoded_bytes(), 4);
        // 50 ms in ns: 5e7 << 1 = 1e8 < 2^28: four bytes.
        c.push(50_000_000.0);
        assert_eq!(c.encoded_bytes(), 8);
        // A fraction, −0.0, a negative and 2^53 + 2 are raw: 9 bytes each.
        for v in [0.5, -0.0, -3.0, 9_007_199_254_740_994.0] {
            let before = c.encoded_bytes();
            c.push(v);
            assert_eq!(c.encoded_bytes() - before, 9, "{v}");
        }
        // 2^53 itself is an integer: 54 bits → 8 varint bytes.
        let before = c.encoded_bytes();
        c.push(MAX_INT);
        assert_eq!(c.encoded_bytes() - before, 8);
        let want = [
            0.0,
            63.0,
            64.0,
            5e7,
            0.5,
            -0.0,
            -3.0,
            9_007_199_254_740_994.0,
            MAX_INT,
        ];
        let got = c.to_vec();
        assert_eq!(got.len(), c.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.to_bits(), w.to_bits());
        }
        assert_eq!(c.last_batch(), vec![MAX_INT]);
    }

    #[test]
    fn skip_steps_over_whole_values_raw_ones_included() {
        // 5 (1 byte), 0.5 (marker + 8 raw bytes), 300 (600: 2 bytes), 7 (1 byte).
        let c: Column = [5.0, 0.5, 300.0, 7.0].into_iter().collect();
        let b = c.encoded();
        assert_eq!(b.len(), 13);
        assert_eq!(skip(b, 0, 1), 1);
        assert_eq!(skip(b, 0, 2), 10);
        assert_eq!(skip(b, 1, 2), 12);
        assert_eq!(skip(b, 0, 4), 13);
        let tail: Vec<f64> = decode(&b[10..]).collect();
        assert_eq!(tail, vec![300.0, 7.0]);
        // Cut short: past the end.
        assert_eq!(skip(b, 0, 5), 14);
    }

    #[test]
    fn last_batch_is_the_last_extend() {
        let mut c: Column = [1.0, 2.5].into_iter().collect();
        c.extend([3.0, 4.25, 5.0]);
        assert_eq!(c.last_batch(), vec![3.0, 4.25, 5.0]);
        c.extend(std::iter::empty());
        assert!(c.last_batch().is_empty());
        assert_eq!(c.to_vec(), vec![1.0, 2.5, 3.0, 4.25, 5.0]);
    }

    proptest! {
        #[test]
        fn every_value_comes_back_bit_for_bit(
            v in proptest::collection::vec(
                prop_oneof![
                    any::<f64>(),
                    (0u64..1 << 53).prop_map(|x| x as f64),
                    (0u64..100_000_000).prop_map(|x| x as f64),
                ],
                0..300,
            )
        ) {
            let c: Column = v.iter().copied().collect();
            prop_assert_eq!(c.len(), v.len());
            let back: Vec<u64> = c.iter().map(f64::to_bits).collect();
            let want: Vec<u64> = v.iter().map(|x| x.to_bits()).collect();
            prop_assert_eq!(back, want);
        }
    }
}
