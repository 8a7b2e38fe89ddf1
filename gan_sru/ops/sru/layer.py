"""SRU (Lei et al. 2017, "Training RNNs as Fast as CNNs") for nnabla.

Two levels, both time-major like `F.lstm`:

* `sru_recurrence(u, x, bias, c0, ...)`: the elementwise recurrence as one fused nnabla function
  (numba kernel on CPU, CUDA kernel on a CUDA context) or, with `impl="ref"`, the same math unrolled over
  time in plain `nnabla.functions` ops (slow, exportable; the tests tie the two together).
* `sru(x, hidden_size, ...)`: the layer stack in the style of `nnabla.parametric_functions`, with one
  matmul for all time steps per layer (BLAS on CPU, cuBLAS affine on CUDA) feeding the recurrence.

Column order of a layer's projection `u` (L, B, R*K*D): direction r, then projection j, then unit d,
with j = 0: z (candidate), 1: forget gate, 2: reset gate, 3: skip input x' (only when K == 4, i.e. when
the layer's input width differs from D). See `gan_sru.ops.sru.reference` for the exact equations.
"""
import math

import nnabla as nn
import nnabla.functions as F
import nnabla.initializer as I
import nnabla.parametric_functions as PF
import numpy as np
from nnabla.function import PythonFunction

from gan_sru.ops.matmul import host_array, is_cuda_context, matmul, write_grad

from . import cpu as sru_cpu
from .reference import ACTIVATIONS

IMPLS = ("auto", "fused", "ref")


class SRURecurrence(PythonFunction):
    """Fused SRU recurrence. Inputs: u, [x if K == 3], bias, c0, [weight_c], [mask].

    Shapes: u (L, B, R*K*D), x (L, B, D) (both directions read it) or (L, B, R*D) (direction r reads its
    r-th D columns), bias (R, 2, D), c0 (B, R*D), weight_c (R, 2, D), mask (L, B).
    Outputs: h (L, B, R*D) and c (L, B, R*D), the cell state at every step. Backward recomputes the gates
    from u and the saved c, so it needs the inputs' data and the c output's data, never h's.
    """

    def __init__(self, ctx, num_directions, num_proj, activation, scale_x, has_weight_c, has_mask):
        super().__init__(ctx)
        self.R, self.K = num_directions, num_proj
        self.activation, self.scale_x = activation, float(scale_x)
        self.has_weight_c, self.has_mask = has_weight_c, has_mask

    @property
    def name(self):
        return "SRURecurrence"

    def min_outputs(self):
        return 2

    def _slots(self, inputs):
        """Map the positional inputs to names (x, weight_c and mask are optional)."""
        names = ["u"] + (["x"] if self.K == 3 else []) + ["bias", "c0"]
        names += (["weight_c"] if self.has_weight_c else []) + (["mask"] if self.has_mask else [])
        return dict(zip(names, inputs)), names

    def setup_impl(self, inputs, outputs):
        v, names = self._slots(inputs)
        if len(inputs) != len(names):
            raise ValueError(f"SRURecurrence expects inputs {names}, got {len(inputs)}")
        L, B, cols = v["u"].shape
        R, D = v["bias"].shape[0], v["bias"].shape[2]
        self.dims = (L, B, R, self.K, D)
        if R != self.R or cols != R * self.K * D:
            raise ValueError(f"u has {cols} columns; expected R*K*D = {self.R}*{self.K}*{D}")
        if tuple(v["c0"].shape) != (B, R * D):
            raise ValueError(f"c0 has shape {v['c0'].shape}; expected {(B, R * D)}")
        self.x_dirs = 1
        if "x" in v:
            if tuple(v["x"].shape) == (L, B, R * D) and R > 1:
                self.x_dirs = R
            elif tuple(v["x"].shape) != (L, B, D):
                raise ValueError(f"x has shape {v['x'].shape}; expected {(L, B, D)} or {(L, B, R * D)}")
        if "mask" in v and tuple(v["mask"].shape) != (L, B):
            raise ValueError(f"mask has shape {v['mask'].shape}; expected {(L, B)}")
        outputs[0].reset_shape((L, B, R * D), True)
        outputs[1].reset_shape((L, B, R * D), True)

    def _shapes(self):
        L, B, R, K, D = self.dims
        x = (L, B, D) if self.x_dirs == 1 else (L, B, R, D)
        return dict(u=(L, B, R, K, D), x=x, bias=(R, 2, D), c0=(B, R, D),
                    weight_c=(R, 2, D), mask=(L, B), state=(L, B, R, D))

    def forward_impl(self, inputs, outputs):
        v, _ = self._slots(inputs)
        if is_cuda_context(self.ctx):
            from gan_sru.ops.sru import cuda as sru_cuda
            return sru_cuda.function_forward(self, v, outputs)
        s = self._shapes()
        a = {k: host_array(var.data, s[k]) for k, var in v.items()}
        sru_cpu.forward(a["u"], a.get("x"), a["bias"], a["c0"], a.get("weight_c"), a.get("mask"),
                        self.activation, self.scale_x,
                        out_h=host_array(outputs[0].data, s["state"], write_only=True),
                        out_c=host_array(outputs[1].data, s["state"], write_only=True))

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        v, names = self._slots(inputs)
        pd = dict(zip(names, propagate_down))
        acc = dict(zip(names, accum))
        if not any(pd[k] for k in names if k != "mask"):
            return
        if is_cuda_context(self.ctx):
            from gan_sru.ops.sru import cuda as sru_cuda
            return sru_cuda.function_backward(self, v, outputs, pd, acc)
        s = self._shapes()
        a = {k: host_array(var.data, s[k]) for k, var in v.items()}
        c = host_array(outputs[1].data, s["state"])
        dh = host_array(outputs[0].grad, s["state"])
        dc = host_array(outputs[1].grad, s["state"])
        out_du = None
        if pd["u"] and not acc["u"]:
            out_du = host_array(v["u"].grad, s["u"], write_only=True)  # the kernel writes du in place
        g = sru_cpu.backward(a["u"], a.get("x"), a["bias"], a["c0"], a.get("weight_c"), a.get("mask"),
                             c, dh, dc, self.activation, self.scale_x, out_du=out_du)
        grads = dict(u=g["du"], x=g["dx"], bias=g["dbias"], c0=g["dc0"], weight_c=g["dwc"])
        for k in names:
            if k == "mask" or not pd[k] or (k == "u" and out_du is not None):
                continue
            write_grad(v[k], grads[k].reshape(v[k].shape), acc[k])

    def grad_depends_output_data(self, i, o):
        return o == 1

    def grad_depends_input_data(self, i, j):
        return True


def _take(v, axis, index):
    """v[..., index, ...] along `axis`, dropping that axis (plain nnabla ops)."""
    start = [0] * v.ndim
    stop = list(v.shape)
    start[axis], stop[axis] = index, index + 1
    out = F.slice(v, start=start, stop=stop)
    return F.reshape(out, v.shape[:axis] + v.shape[axis + 1:])


def _recurrence_ref(u, x, bias, c0, weight_c, mask, activation, R, K, D, scale_x):
    """The recurrence unrolled over time in plain nnabla ops. Returns (h, c), both (L, B, R*D)."""
    L, B = u.shape[:2]
    u5 = F.reshape(u, (L, B, R, K, D))
    u_t = F.split(u5, axis=0) if L > 1 else (F.reshape(u5, (B, R, K, D)),)
    x_t = (F.split(x, axis=0) if L > 1 else (F.reshape(x, (B, x.shape[2])),)) if K == 3 else None
    m_t = None
    if mask is not None:
        m_t = F.split(F.reshape(mask, (L, B, 1)), axis=0) if L > 1 else (F.reshape(mask, (B, 1)),)
    c0_3 = F.reshape(c0, (B, R, D))
    h = [[None] * R for _ in range(L)]
    c = [[None] * R for _ in range(L)]
    for r in range(R):
        c_prev = _take(c0_3, 1, r)
        b_f, b_r = _take(_take(bias, 0, r), 0, 0), _take(_take(bias, 0, r), 0, 1)
        for t in (range(L) if r == 0 else range(L - 1, -1, -1)):
            ur = _take(u_t[t], 1, r)  # (B, K, D)
            z, uf, urr = _take(ur, 1, 0), _take(ur, 1, 1), _take(ur, 1, 2)
            pre_f, pre_r = uf + F.reshape(b_f, (1, D)), urr + F.reshape(b_r, (1, D))
            if weight_c is not None:
                wr = _take(weight_c, 0, r)
                pre_f = pre_f + F.reshape(_take(wr, 0, 0), (1, D)) * c_prev
                pre_r = pre_r + F.reshape(_take(wr, 0, 1), (1, D)) * c_prev
            f, rr = F.sigmoid(pre_f), F.sigmoid(pre_r)
            c_new = f * (c_prev - z) + z
            g = F.tanh(c_new) if activation == "tanh" else c_new
            if K == 4:
                xs = _take(ur, 1, 3)
            elif x.shape[2] == D:
                xs = x_t[t]
            else:  # (L, B, R*D): direction r reads its own D columns
                xs = F.slice(x_t[t], start=(0, r * D), stop=(B, (r + 1) * D))
            xs = xs * scale_x
            h_new = rr * (g - xs) + xs
            if m_t is not None:
                m = m_t[t]
                c_new = m * c_new + (1.0 - m) * c_prev
                h_new = m * h_new
            h[t][r], c[t][r] = h_new, c_new
            c_prev = c_new
    stack = (lambda vs: F.stack(*vs, axis=1)) if R > 1 else (lambda vs: F.reshape(vs[0], (B, 1, D)))
    h_all = F.stack(*[stack(h[t]) for t in range(L)], axis=0) if L > 1 else F.reshape(stack(h[0]), (1, B, R, D))
    c_all = F.stack(*[stack(c[t]) for t in range(L)], axis=0) if L > 1 else F.reshape(stack(c[0]), (1, B, R, D))
    return F.reshape(h_all, (L, B, R * D)), F.reshape(c_all, (L, B, R * D))


def _last_state(c_all, R, D):
    """c after the last step of each direction: c[L-1] forward, c[0] backward. (L, B, R*D) -> (B, R*D)."""
    L, B = c_all.shape[:2]
    fwd = F.reshape(F.slice(c_all, start=(L - 1, 0, 0), stop=(L, B, D)), (B, D))
    if R == 1:
        return fwd
    bwd = F.reshape(F.slice(c_all, start=(0, 0, D), stop=(1, B, 2 * D)), (B, D))
    return F.concatenate(fwd, bwd, axis=1)


def sru_recurrence(u, x, bias, c0, weight_c=None, mask=None, activation="tanh", bidirectional=False,
                   scale_x=1.0, impl="auto"):
    """The SRU elementwise recurrence.

    Args:
        u (nn.Variable): (L, B, R*K*D) projections, column order (direction, projection, unit).
        x (nn.Variable or None): the skip input when K == 3, (L, B, D) read by every direction or, with
            bidirectional, (L, B, R*D) whose r-th D columns direction r reads; None when u carries it (K == 4).
        bias (nn.Variable): (R, 2, D) forget and reset gate biases.
        c0 (nn.Variable): (B, R*D) initial cell state.
        weight_c (nn.Variable or None): (R, 2, D) the 2018 form's v_f, v_r; None for the 2017 form.
        mask (nn.Variable or None): (L, B), 1 for valid steps and 0 for right padding.
        activation (str): "tanh" or "identity" (g in h = r*(g(c) - x') + x').
        bidirectional (bool): R = 2, the second direction walking time backwards.
        scale_x (float): factor on the skip input x'.
        impl (str): "auto"/"fused" (the fused kernel of the current context) or "ref" (plain nnabla ops).

    Returns:
        h (L, B, R*D) and c_last (B, R*D).
    """
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    R = 2 if bidirectional else 1
    if bias.ndim != 3 or bias.shape[0] != R or bias.shape[1] != 2:
        raise ValueError(f"bias must have shape ({R}, 2, D), got {bias.shape}")
    D = bias.shape[2]
    K = 3 if x is not None else 4
    L, B = u.shape[:2]
    if x is not None and tuple(x.shape) not in ((L, B, D), (L, B, R * D)):
        raise ValueError(f"x must have shape {(L, B, D)}" + (f" or {(L, B, R * D)}" if R > 1 else "")
                         + f" (the skip input of u's L and B and D = {D} units), got {tuple(x.shape)}")
    if impl == "ref":
        h, c = _recurrence_ref(u, x, bias, c0, weight_c, mask, activation, R, K, D, scale_x)
    else:
        inputs = [u] + ([x] if K == 3 else []) + [bias, c0]
        inputs += ([weight_c] if weight_c is not None else []) + ([mask] if mask is not None else [])
        fn = SRURecurrence(nn.get_current_context(), R, K, activation, scale_x,
                           weight_c is not None, mask is not None)
        h, c = fn(*inputs)
    c_last = _last_state(c, R, D)
    return h, c_last


def sru(x, hidden_size, num_layers=2, bidirectional=False, dropout=0.0, highway_bias=0.0, rescale=True,
        weight_c=False, projection_size=0, layer_norm=False, activation="tanh", c0=None, mask=None,
        impl="auto", train=True, name="sru", identity_skip=False):
    """A stack of SRU layers, parameters created under `nn.parameter_scope(name)`.

    Args:
        x (nn.Variable): (L, B, I) time-major input.
        hidden_size (int): D, units per direction.
        num_layers (int): stacked layers; layer l > 0 reads the (L, B, R*D) output of layer l-1.
        bidirectional (bool): R = 2 directions per layer.
        dropout (float): dropout on every layer's input after the first, one mask shared over time
            (variational), applied only when `train` is True.
        highway_bias (float): initial reset-gate bias; negative values favour the skip path early on.
        rescale (bool): scale the identity skip input by sqrt(1 + 2 exp(highway_bias)) as the official SRU
            does, keeping the output variance near 1 at initialisation.
        weight_c (bool): the 2018 form with v ⊙ c_{t-1} in both gates.
        projection_size (int): if > 0, factor each layer's weight through a rank-`projection_size` bottleneck.
        layer_norm (bool): layer normalisation of each layer's input.
        activation (str): "tanh" or "identity".
        c0 (nn.Variable or None): (num_layers, B, R*D) initial states; zeros when None.
        mask (nn.Variable or None): (L, B), 1 valid, 0 right padding.
        impl (str): "auto", "fused" or "ref" (plain nnabla ops for the recurrence and the matmul).
        identity_skip (bool): with bidirectional, a layer whose input is R*D wide (every layer after the
            first) takes its skip input x' from that input, direction r its r-th half, as the official SRU
            does, instead of from a fourth projection: its weight W is 3/4 as wide. A layer whose input is D
            wide always uses the identity skip, one whose input has another width always the projection.

    Returns:
        h (L, B, R*D): the last layer's output (0 at padded steps).
        c_last (num_layers, B, R*D): each layer's cell state after its last valid step.
    """
    if x.ndim != 3:
        raise ValueError(f"sru expects x of shape (L, B, I), got {x.shape}")
    L, B, in_size = x.shape
    R, D = (2 if bidirectional else 1), int(hidden_size)
    h, c_lasts = x, []
    with nn.parameter_scope(name):
        for layer in range(num_layers):
            with nn.parameter_scope(f"layer{layer}"):
                width = h.shape[2]
                K = 3 if width == D or (identity_skip and bidirectional and width == R * D) else 4
                inp = h
                if layer_norm:
                    inp = PF.layer_normalization(inp, batch_axis=(0, 1))
                if dropout > 0 and layer > 0 and train:
                    keep = F.dropout(F.constant(1.0, (1, B, width)), p=dropout)
                    inp = inp * keep
                u = _projection(inp, width, R * K * D, projection_size, impl)
                bias_init = np.zeros((R, 2, D), np.float32)
                bias_init[:, 1] = highway_bias
                bias = nn.parameter.get_parameter_or_create("bias", (R, 2, D), bias_init)
                wc = None
                if weight_c:
                    wc = nn.parameter.get_parameter_or_create(
                        "weight_c", (R, 2, D), I.UniformInitializer((-0.5 / math.sqrt(D), 0.5 / math.sqrt(D))))
                c0_l = F.constant(0.0, (B, R * D)) if c0 is None else _take(c0, 0, layer)
                scale_x = math.sqrt(1.0 + 2.0 * math.exp(highway_bias)) if (rescale and K == 3) else 1.0
                h, c_last = sru_recurrence(u, inp if K == 3 else None, bias, c0_l, wc, mask, activation,
                                           bidirectional, scale_x, impl="ref" if impl == "ref" else "auto")
                c_lasts.append(c_last)
    c_last = F.stack(*c_lasts, axis=0) if num_layers > 1 else F.reshape(c_lasts[0], (1, B, R * D))
    return h, c_last


def _projection(inp, width, out_cols, projection_size, impl):
    """u = inp @ W for all steps at once: (L, B, width) -> (L, B, out_cols)."""
    mm_impl = "ref" if impl == "ref" else "auto"
    if projection_size and projection_size > 0:
        p = nn.parameter.get_parameter_or_create(
            "P", (width, projection_size), I.UniformInitializer(_uniform_bound(width)))
        inp = matmul(inp, p, impl=mm_impl)
        width = projection_size
    w = nn.parameter.get_parameter_or_create(
        "W", (width, out_cols), I.UniformInitializer(_uniform_bound(width)))
    return matmul(inp, w, impl=mm_impl)


def _uniform_bound(fan_in):
    b = math.sqrt(3.0 / fan_in)  # unit-variance outputs for unit-variance inputs, as the official SRU
    return (-b, b)
