"""Shared pytest setup for the unit tests (kept tiny on purpose)."""

import matplotlib

# Draw off-screen. Set in-process, not through MPLBACKEND, so that notebook
# kernels started by nbval keep their inline backend.
matplotlib.use("Agg")
