//! The C test harness of the C SDK (work in progress: see issue 7).
