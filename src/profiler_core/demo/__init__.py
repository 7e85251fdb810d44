"""The runnable demo that ``profiler init`` writes (also in ``examples/demo/``)."""
