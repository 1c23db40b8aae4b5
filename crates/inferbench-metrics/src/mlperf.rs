//! Definition set module: mlperf (being built).
