"""uv, the resolver and installer gpuenv drives: where its binary is, and what gpuenv asks it."""
