"""A class lockfile as a container recipe or an HPC module, so every route installs the same
hashed bytes:

- recipe:     what a Dockerfile and an Apptainer definition share: the lockfile's wheels as a
              hash-checked requirements list (or copied from a wheelhouse, offline), the check
              that imports each framework
- dockerfile: `gpuenv export LOCKFILE --to dockerfile -o DIR`
- apptainer:  `gpuenv export LOCKFILE --to apptainer -o DIR`
- lmod:       `gpuenv export --name ENV --to lmod -o FILE.lua`, an environment as a modulefile
"""
