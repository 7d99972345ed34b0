"""conda packages through py-rattler, always in a child process (see rattler_child)."""
