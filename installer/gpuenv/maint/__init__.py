"""Keeping the knowledge base true: what the maintenance commands (`gpuenv recipes check
--online`, `recipes verify --artifacts`, `recipes draft`) read from live indexes and wheels.

Above index/ (they talk to indexes) and recipes/ (they compare its rows with what they read);
nothing at run time (resolve, lock, install) imports them.
"""
