"""mrclab drill reports: load a run directory, plot it, render HTML and Markdown (see ../README.md)."""
