//! Definition set module: genai_perf (being built).
