"""PEP 751 pylock.toml: gpuenv's writer and its strict reader."""
