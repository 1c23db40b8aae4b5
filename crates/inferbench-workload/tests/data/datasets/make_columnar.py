# Writes the columnar fixtures (pyarrow): the baseten_trace files, from the column list of AIPerf's
# BasetenTrace model, and a text public dataset as Parquet and as an Arrow stream.
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.ipc as ipc
rows = [
    dict(timestamp_start_unix_ms=1700000001000, prompt="alpha", input_tokens=3, output_tokens=6,
         total_hashes=[1, 2], provided_session_id="s1", poor_man_session_id=7, block_size=64,
         duration_e2e_ms=400, model_name="m", request_canceled=0),
    dict(timestamp_start_unix_ms=1700000000000, prompt="solo", input_tokens=2, output_tokens=0,
         total_hashes=None, provided_session_id=None, poor_man_session_id=9, block_size=None,
         duration_e2e_ms=None, model_name="m", request_canceled=1),
    dict(timestamp_start_unix_ms=1700000003000, prompt="beta", input_tokens=4, output_tokens=8,
         total_hashes=[1, 2, 3], provided_session_id="s1", poor_man_session_id=7, block_size=64,
         duration_e2e_ms=500, model_name="m", request_canceled=0),
    dict(timestamp_start_unix_ms=1700000002000, prompt="gamma", input_tokens=5, output_tokens=5,
         total_hashes=[], provided_session_id="s2", poor_man_session_id=8, block_size=64,
         duration_e2e_ms=100, model_name="m", request_canceled=0),
]
schema = pa.schema([
    ("timestamp_start_unix_ms", pa.int64()), ("prompt", pa.string()),
    ("input_tokens", pa.int64()), ("output_tokens", pa.int64()),
    ("total_hashes", pa.list_(pa.int64())), ("provided_session_id", pa.string()),
    ("poor_man_session_id", pa.int64()), ("block_size", pa.int64()),
    ("duration_e2e_ms", pa.int64()), ("model_name", pa.string()), ("request_canceled", pa.int8()),
])
t = pa.Table.from_pylist(rows, schema=schema)
pq.write_table(t, "baseten.parquet")  # snappy pages, pyarrow's default
pq.write_table(t, "baseten_zstd.parquet", compression="zstd", row_group_size=2)
with ipc.new_file("baseten.arrow", t.schema) as w:
    w.write_table(t, max_chunksize=3)
with ipc.new_stream("baseten_stream.ipc", t.schema) as w:
    w.write_table(t)

# The MT-Bench prompts fixture as the Hugging Face hub's Parquet and the datasets cache's
# Arrow stream (a list column, a string column, an integer column).
import json
mt = [json.loads(l) for l in open("mt_bench_prompts.jsonl")]
mt_table = pa.Table.from_pylist(mt)
pq.write_table(mt_table, "mt_bench_prompts.parquet")
with ipc.new_stream("mt_bench_prompts.arrow", mt_table.schema) as w:
    w.write_table(mt_table)
