"""One model on every rank: rank 0's state broadcast to all, the ranks' states and data compared by digest."""
import hashlib
import json

import numpy as np

from gan_sru import DataError


def _solver_states(solvers):
    """[(solver name, param name, state)] in a fixed order, and the live states per solver."""
    live = {name: solver.get_states() for name, solver in sorted(solvers.items())}
    return [(s, p, st) for s, states in live.items() for p, st in sorted(states.items())], live


def state_digest(params, solvers):
    """SHA-256 of every parameter and solver state (values and Adam's step counts), in name order."""
    h = hashlib.sha256()
    for name in sorted(params):
        h.update(name.encode())
        h.update(np.ascontiguousarray(params[name].d).tobytes())
    for sname, pname, st in _solver_states(solvers)[0]:
        h.update(f"{sname}/{pname}/{int(st.t)}".encode())
        for k in sorted(st.pstate):
            h.update(np.ascontiguousarray(st.pstate[k].d).tobytes())
    return h.hexdigest()


def check_same_data(comm, dataset, scaler):
    """Refuse ranks whose training sequences or scaler differ from rank 0's (e.g. a data file that differs
    between nodes): each rank would train on its own data while they all share one model."""
    if comm.size == 1:
        return
    h = hashlib.sha256(json.dumps(scaler.to_dict(), sort_keys=True, default=repr).encode())
    for seq in dataset.sequences:
        h.update(np.ascontiguousarray(seq).tobytes())
    comm.check_same(h.hexdigest(), f"training data ({len(dataset)} sequences after the split, and the scaler)",
                    error=DataError, hint="; every rank must read the same data file")


def broadcast_state(comm, params, solvers):
    """Rank 0's parameters {name: Variable} and solver states on every rank (Adam's t and moments)."""
    if comm.size == 1:
        return
    ordered, live = _solver_states(solvers)
    variables = [params[k] for k in sorted(params)] + [st.pstate[k] for _, _, st in ordered for k in sorted(st.pstate)]
    comm.broadcast_variables(variables)
    steps = comm.broadcast_object([int(st.t) for _, _, st in ordered])
    for (_, _, st), t in zip(ordered, steps):
        st.t = t
    for name, states in live.items():
        solvers[name].set_states(states)
