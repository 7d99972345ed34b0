"""Environments: where they live (store), how they are built (backends), and the transaction
that replaces one atomically (transaction), from verified artifacts (artifacts)."""
