"""Lab files: one stack, the lab's machine classes and their lockfiles (load), read from
untrusted TOML through one schema (schema)."""
