"""conda-lock's v1 lockfile format: gpuenv's writer and its strict reader."""
