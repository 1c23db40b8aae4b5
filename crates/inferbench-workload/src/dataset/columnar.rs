//! Columnar trace files (baseten_trace): Parquet, and Arrow IPC in its file and stream
//! forms, read into record batches, with typed cell readers whose errors say what was
//! found. The file's own magic bytes decide the format, not its name.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, SchemaRef};

use super::error::DatasetError;

/// Rows per batch when reading Parquet (bounded memory while converting).
const BATCH_ROWS: usize = 4096;

/// A columnar file's layout, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// `PAR1` at both ends.
    Parquet,
    /// Arrow IPC file: `ARROW1` at both ends.
    ArrowFile,
    /// Arrow IPC stream: a continuation marker (`FF FF FF FF`) then a schema message.
    ArrowStream,
}

/// The format of `path` from its magic bytes, or None (not columnar, or unreadable).
pub(crate) fn format_of(path: &Path) -> Option<Format> {
    let mut head = [0u8; 6];
    let n = File::open(path).ok()?.read(&mut head).ok()?;
    format_of_bytes(&head[..n])
}

/// The format of a file starting with `head`.
pub(crate) fn format_of_bytes(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"PAR1") {
        Some(Format::Parquet)
    } else if head.starts_with(b"ARROW1") {
        Some(Format::ArrowFile)
    } else if head.starts_with(&[0xff; 4]) {
        Some(Format::ArrowStream)
    } else {
        None
    }
}

/// AIPerf's suffixes for columnar traces.
pub(crate) fn has_columnar_suffix(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["parquet", "arrow", "ipc"].contains(&e.to_ascii_lowercase().as_str()))
}

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>>>;

/// Runs `f`, which reads a columnar file, turning a panic of the Arrow or Parquet decoders
/// into an error naming `shown`. Those decoders trust lengths and offsets inside the file
/// and can panic on a damaged one (found by the proptest over damaged fixtures); a bad file
/// must be a one-line error, never a crash. The panic's own report is kept off stderr.
pub(crate) fn guarded<T>(
    shown: &str,
    f: impl FnOnce() -> Result<T, DatasetError>,
) -> Result<T, DatasetError> {
    use std::cell::Cell;
    use std::sync::Once;
    thread_local!(static QUIET: Cell<bool> = const { Cell::new(false) });
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| p.downcast_ref::<&str>().copied())
            .unwrap_or("no reason given");
        Err(DatasetError::file(
            shown,
            format!("not a readable columnar file: the decoder failed on damaged data ({why})"),
        ))
    })
}

/// Opens a columnar file's bytes (`shown` naming it): its schema and its record batches in
/// file order.
pub(crate) fn open_bytes(
    shown: &str,
    bytes: Vec<u8>,
) -> Result<(SchemaRef, Batches), DatasetError> {
    let err = |what: &str, e: &dyn std::fmt::Display| {
        DatasetError::file(shown, format!("not a readable {what} file: {e}"))
    };
    let format = format_of_bytes(&bytes).ok_or_else(|| {
        DatasetError::file(
            shown,
            "is neither Parquet (PAR1) nor Arrow IPC (ARROW1, or a stream): baseten_trace reads those",
        )
    })?;
    Ok(match format {
        Format::Parquet => {
            let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
                bytes::Bytes::from(bytes),
            )
            .map_err(|e| err("Parquet", &e))?;
            let schema = b.schema().clone();
            let r = b
                .with_batch_size(BATCH_ROWS)
                .build()
                .map_err(|e| err("Parquet", &e))?;
            (schema, Box::new(r))
        }
        Format::ArrowFile => {
            let r = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)
                .map_err(|e| err("Arrow IPC", &e))?;
            (r.schema(), Box::new(r))
        }
        Format::ArrowStream => {
            let r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)
                .map_err(|e| err("Arrow IPC stream", &e))?;
            (r.schema(), Box::new(r))
        }
    })
}

/// One column of one batch.
pub(crate) struct Col<'a> {
    array: &'a ArrayRef,
}

/// A column of `batch` by name (None: the file has no such column).
pub(crate) fn column<'a>(batch: &'a RecordBatch, name: &str) -> Option<Col<'a>> {
    batch.column_by_name(name).map(|array| Col { array })
}

/// The value of an integer array at `i` (the array is not null there).
fn int_value(a: &dyn Array, i: usize) -> Option<i128> {
    Some(match a.data_type() {
        DataType::Int8 => a.as_primitive::<Int8Type>().value(i) as i128,
        DataType::Int16 => a.as_primitive::<Int16Type>().value(i) as i128,
        DataType::Int32 => a.as_primitive::<Int32Type>().value(i) as i128,
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i) as i128,
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i) as i128,
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i) as i128,
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i) as i128,
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i) as i128,
        _ => return None,
    })
}

/// The value of a string array (plain, large, view or dictionary-encoded) at `i`.
fn str_value(a: &dyn Array, i: usize) -> Option<String> {
    Some(match a.data_type() {
        DataType::Utf8 => a.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => a.as_string::<i64>().value(i).to_string(),
        DataType::Utf8View => a.as_string_view().value(i).to_string(),
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let key = *d.normalized_keys().get(i)?;
            return str_value(d.values().as_ref(), key);
        }
        _ => return None,
    })
}

impl Col<'_> {
    fn type_name(&self) -> String {
        self.array.data_type().to_string()
    }

    /// A non-negative integer (None: null).
    pub fn u64_at(&self, i: usize) -> Result<Option<u64>, String> {
        if self.array.is_null(i) {
            return Ok(None);
        }
        match int_value(self.array.as_ref(), i) {
            Some(v) if v >= 0 && v <= u64::MAX as i128 => Ok(Some(v as u64)),
            Some(v) => Err(format!("{v} is not an integer ≥ 0")),
            None => Err(format!(
                "expected an integer column, found {}",
                self.type_name()
            )),
        }
    }

    /// A string (None: null).
    pub fn str_at(&self, i: usize) -> Result<Option<String>, String> {
        if self.array.is_null(i) {
            return Ok(None);
        }
        str_value(self.array.as_ref(), i)
            .map(Some)
            .ok_or_else(|| format!("expected a string column, found {}", self.type_name()))
    }

    /// A string, or an integer ≥ 0 written as one (None: null): a session id.
    pub fn key_at(&self, i: usize) -> Result<Option<String>, String> {
        if self.array.is_null(i) {
            return Ok(None);
        }
        if let Some(s) = str_value(self.array.as_ref(), i) {
            return Ok(Some(s));
        }
        match int_value(self.array.as_ref(), i) {
            Some(v) if v >= 0 => Ok(Some(v.to_string())),
            Some(v) => Err(format!("{v} is not an integer ≥ 0")),
            None => Err(format!(
                "expected a string or integer column, found {}",
                self.type_name()
            )),
        }
    }

    /// A list of integers ≥ 0 (a null list is empty, as AIPerf reads it).
    pub fn u64_list_at(&self, i: usize) -> Result<Vec<u64>, String> {
        if self.array.is_null(i) {
            return Ok(Vec::new());
        }
        let items: ArrayRef = match self.array.data_type() {
            DataType::List(_) => self.array.as_list::<i32>().value(i),
            DataType::LargeList(_) => self.array.as_list::<i64>().value(i),
            DataType::FixedSizeList(_, _) => self.array.as_fixed_size_list().value(i),
            _ => {
                return Err(format!(
                    "expected a list of integers, found {}",
                    self.type_name()
                ));
            }
        };
        (0..items.len())
            .map(|j| {
                if items.is_null(j) {
                    return Err(format!("item {j} is null"));
                }
                match int_value(items.as_ref(), j) {
                    Some(v) if v >= 0 && v <= i64::MAX as i128 => Ok(v as u64),
                    Some(v) => Err(format!("item {j}: {v} is not an integer ≥ 0")),
                    None => Err(format!(
                        "expected a list of integers, found {}",
                        self.type_name()
                    )),
                }
            })
            .collect()
    }
}

/// Every row of a columnar file's bytes as a JSON object (column name → value), in file
/// order: for exports of text datasets (the Hugging Face cache's Arrow stream files, the
/// hub's Parquet). Binary, temporal and decimal cells are refused naming their column.
pub(crate) fn json_rows(
    shown: &str,
    bytes: Vec<u8>,
) -> Result<Vec<serde_json::Map<String, serde_json::Value>>, DatasetError> {
    guarded(shown, || {
        let (schema, batches) = open_bytes(shown, bytes)?;
        let mut rows = Vec::new();
        for batch in batches {
            let batch = batch.map_err(|e| {
                DatasetError::file(
                    shown,
                    format!("cannot read a batch after row {}: {e}", rows.len()),
                )
            })?;
            for i in 0..batch.num_rows() {
                let mut row = serde_json::Map::new();
                for (f, col) in schema.fields().iter().zip(batch.columns()) {
                    let v = json_value(col.as_ref(), i).map_err(|m| {
                        DatasetError::field(
                            shown,
                            None,
                            format!("[{}].{}", rows.len(), f.name()),
                            m,
                        )
                    })?;
                    row.insert(f.name().clone(), v);
                }
                rows.push(row);
            }
        }
        Ok(rows)
    })
}

/// One cell as JSON: numbers, strings, booleans, lists and structs (recursively); a
/// non-finite float is null (JSON has no NaN).
fn json_value(a: &dyn Array, i: usize) -> Result<serde_json::Value, String> {
    use serde_json::Value;
    if a.is_null(i) {
        return Ok(Value::Null);
    }
    if let Some(v) = int_value(a, i) {
        return Ok(match i64::try_from(v) {
            Ok(x) => Value::from(x),
            Err(_) => Value::from(v as u64),
        });
    }
    if let Some(s) = str_value(a, i) {
        return Ok(Value::String(s));
    }
    let list = |items: ArrayRef| -> Result<Value, String> {
        (0..items.len())
            .map(|j| json_value(items.as_ref(), j))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    };
    Ok(match a.data_type() {
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Float32 => serde_json::Number::from_f64(
            a.as_primitive::<arrow_array::types::Float32Type>().value(i) as f64,
        )
        .map_or(Value::Null, Value::Number),
        DataType::Float64 => serde_json::Number::from_f64(
            a.as_primitive::<arrow_array::types::Float64Type>().value(i),
        )
        .map_or(Value::Null, Value::Number),
        DataType::List(_) => list(a.as_list::<i32>().value(i))?,
        DataType::LargeList(_) => list(a.as_list::<i64>().value(i))?,
        DataType::FixedSizeList(_, _) => list(a.as_fixed_size_list().value(i))?,
        DataType::Struct(fields) => {
            let st = a.as_struct();
            let mut m = serde_json::Map::new();
            for (f, c) in fields.iter().zip(st.columns()) {
                m.insert(f.name().clone(), json_value(c.as_ref(), i)?);
            }
            Value::Object(m)
        }
        other => {
            return Err(format!(
                "{other} values are not read (text, numbers, booleans, lists and structs are)"
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decoder_panic_is_an_error_naming_the_file() {
        let e = guarded::<()>("t.arrow", || panic!("offset past the end")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.arrow: not a readable columnar file: the decoder failed on damaged data (offset past the end)"
        );
        // Results pass through.
        assert_eq!(guarded("t.arrow", || Ok(3)).unwrap(), 3);
    }

    #[test]
    fn cells_become_json_and_unread_types_are_named() {
        use arrow_array::{BinaryArray, BooleanArray, Float64Array, StringArray, StructArray};
        use std::sync::Arc;
        let floats = Float64Array::from(vec![Some(1.5), Some(f64::NAN), None]);
        assert_eq!(json_value(&floats, 0).unwrap(), serde_json::json!(1.5));
        assert_eq!(json_value(&floats, 1).unwrap(), serde_json::Value::Null);
        assert_eq!(json_value(&floats, 2).unwrap(), serde_json::Value::Null);
        let st = StructArray::from(vec![
            (
                Arc::new(arrow_schema::Field::new("ok", DataType::Boolean, false)),
                Arc::new(BooleanArray::from(vec![true])) as ArrayRef,
            ),
            (
                Arc::new(arrow_schema::Field::new("s", DataType::Utf8, false)),
                Arc::new(StringArray::from(vec!["x"])) as ArrayRef,
            ),
        ]);
        assert_eq!(
            json_value(&st, 0).unwrap(),
            serde_json::json!({"ok": true, "s": "x"})
        );
        let bin = BinaryArray::from(vec![&b"png"[..]]);
        assert_eq!(
            json_value(&bin, 0).unwrap_err(),
            "Binary values are not read (text, numbers, booleans, lists and structs are)"
        );
    }

    #[test]
    fn the_magic_bytes_decide_the_format() {
        assert_eq!(format_of_bytes(b"PAR1\x15"), Some(Format::Parquet));
        assert_eq!(format_of_bytes(b"ARROW1\0\0"), Some(Format::ArrowFile));
        assert_eq!(
            format_of_bytes(&[0xff, 0xff, 0xff, 0xff, 8, 0]),
            Some(Format::ArrowStream)
        );
        assert_eq!(format_of_bytes(b"{\"a\""), None);
        assert_eq!(format_of_bytes(b"PA"), None);
    }
}
