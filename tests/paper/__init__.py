"""The paper's experiments: real data sets, tables, snapshots, resume, convergence."""
