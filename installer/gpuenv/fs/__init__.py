"""Untrusted names, and reads and writes that refuse links, devices and escapes: shared by lock,
envs and lab."""
