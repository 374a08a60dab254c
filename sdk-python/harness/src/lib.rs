//! The pytest harness of the Python SDK (work in progress: see issue 6).
