"""Where packages come from: the user's pip and uv configuration, simple-index pages, and which
platforms a wheel file name runs on."""
