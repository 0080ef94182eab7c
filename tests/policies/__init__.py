"""The policies and their compiled kernels: contract, roles, numerics, baselines."""
