// Fused SRU elementwise recurrence: CUDA kernels (float32), compiled at run time by NVRTC (CuPy RawModule).
//
// Plain CUDA C, no #include: NVRTC provides expf/tanhf itself. Launched by gan_sru/sru_cuda.py.
// The math, layouts and outputs are the "SRU recurrence kernel contract" that gan_sru/sru_reference.py
// implements in NumPy. Layouts (C-contiguous, time-major, d innermost):
//
//   u    (L, B, R, K, D)   j = 0: z, 1: f pre-activation, 2: r pre-activation, 3: x' (K == 4 only)
//   x    (L, B, D)         skip input (K == 3 only; both directions read the same x)
//   bias (R, 2, D)         b_f, b_r            wc (R, 2, D) or null: v_f, v_r (null = 0)
//   c0   (B, R, D) or null (null = zeros)      mask (L, B) or null: nonzero = valid step
//   h, c (L, B, R, D)
//
// One thread owns one column (b, r, d), col = (b * R + r) * D + d, and walks time: direction 0 walks
// t = 0..L-1, direction 1 walks t = L-1..0 (backward: the reverse). Consecutive threads have consecutive
// d, so every load and store of a step is coalesced. A thread has little work per step and only B*R*D
// threads exist, so the loads of the next two steps are kept in flight (register prefetch, s1 and s2)
// while a step is computed: the memory latency of a step overlaps the two before it.
// Every output of the backward takes an accumulate flag: out = accum ? out + v : v (nnabla's `accum`).

#define SRU_BLOCK 128  // threads per block; sru_cuda.py launches with exactly this many

__device__ __forceinline__ float sru_sigmoid(const float a) { return 1.0f / (1.0f + expf(-a)); }

__device__ __forceinline__ void sru_store(float* p, const float v, const int accum)
{
    *p = accum ? *p + v : v;
}

// A thread's column (b, r, d): its indices, the gate parameters it reads, and where its u and x' start.
struct SruColumn {
    int d, r, b;
    long long br;               // b * R + r
    float b_f, b_r, v_f, v_r;   // v = 0 when wc is null
    const float* up;            // this column of u at t = 0
    const float* xp;            // this column of x' at t = 0: u[..., 3, :] when K == 4, else x
    long long x_step;           // x' stride between steps
};

__device__ __forceinline__ SruColumn sru_column(const long long col, const float* __restrict__ u,
                                                const float* __restrict__ x, const float* __restrict__ bias,
                                                const float* __restrict__ wc, const int B, const int R,
                                                const int K, const int D)
{
    SruColumn q;
    q.d = (int)(col % D);
    q.br = col / D;
    q.r = (int)(q.br % R);
    q.b = (int)(q.br / R);
    q.b_f = bias[(2 * q.r) * D + q.d];
    q.b_r = bias[(2 * q.r + 1) * D + q.d];
    q.v_f = wc ? wc[(2 * q.r) * D + q.d] : 0.0f;
    q.v_r = wc ? wc[(2 * q.r + 1) * D + q.d] : 0.0f;
    q.up = u + q.br * K * D + q.d;
    q.xp = (K == 4) ? q.up + 3 * D : x + (long long)q.b * D + q.d;
    q.x_step = (K == 4) ? (long long)B * R * D * K : (long long)B * D;
    return q;
}

// What one step of a column reads. x' is u[..., 3, :] when K == 4, else x; m is the mask (1 when null).
struct SruStep {
    float z, f, r, x, m;
};

// The column's reads at step t: up / xp point at the column at t = 0, u_step / x_step are their time strides.
__device__ __forceinline__ SruStep sru_load(const float* __restrict__ up, const float* __restrict__ xp,
                                            const float* __restrict__ mask, const long long t,
                                            const long long u_step, const long long x_step, const int D,
                                            const int B, const int b)
{
    SruStep s;
    s.z = up[t * u_step];
    s.f = up[t * u_step + D];
    s.r = up[t * u_step + 2 * D];
    s.x = xp[t * x_step];
    s.m = mask ? mask[t * B + b] : 1.0f;
    return s;
}

// The backward's extra reads at step t: dh, dc (0 when null) and c_prev, the c of the step before t in the
// forward walk (o_prev its offset) or c0 at the forward walk's first step (o_prev < 0).
struct SruGradStep {
    float dh, dc, cp;
};

__device__ __forceinline__ SruGradStep sru_load_grad(const float* __restrict__ dh, const float* __restrict__ dc,
                                                     const float* __restrict__ c, const long long o,
                                                     const long long o_prev, const float c_init)
{
    SruGradStep g;
    g.dh = dh ? dh[o] : 0.0f;
    g.dc = dc ? dc[o] : 0.0f;
    g.cp = (o_prev >= 0) ? c[o_prev] : c_init;
    return g;
}

// h, c <- forward recurrence. activation: 1 tanh, 0 identity. x is read only when K == 3.
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)
sru_fwd(const float* __restrict__ u, const float* __restrict__ x, const float* __restrict__ bias,
        const float* __restrict__ wc, const float* __restrict__ c0, const float* __restrict__ mask,
        float* __restrict__ h, float* __restrict__ c,
        const int L, const int B, const int R, const int K, const int D,
        const int activation, const float scale_x)
{
    const long long cols = (long long)B * R * D;  // also the stride of h and c between steps
    const long long u_step = cols * K;
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < cols; col += grid_stride) {
        const SruColumn q = sru_column(col, u, x, bias, wc, B, R, K, D);
        const int r = q.r, b = q.b;
        const float b_f = q.b_f, b_r = q.b_r, v_f = q.v_f, v_r = q.v_r;
        const float* up = q.up;
        const float* xp = q.xp;
        const long long x_step = q.x_step;
        float c_prev = c0 ? c0[col] : 0.0f;
        const int dt = (r == 0) ? 1 : -1;
        int t = (r == 0) ? 0 : L - 1;

        const SruStep none = {0.0f, 0.0f, 0.0f, 0.0f, 1.0f};
        SruStep s1 = (L > 0) ? sru_load(up, xp, mask, t, u_step, x_step, D, B, b) : none;  // step i + 1
        SruStep s2 = (L > 1) ? sru_load(up, xp, mask, t + dt, u_step, x_step, D, B, b) : none;  // i + 2
        for (int i = 0; i < L; ++i, t += dt) {
            const SruStep s = s1;
            s1 = s2;
            if (i + 2 < L) s2 = sru_load(up, xp, mask, t + 2 * dt, u_step, x_step, D, B, b);
            const float z = s.z, uf = s.f, ur = s.r, xv = s.x, m = s.m;
            const long long o = t * cols + col;
            if (m != 0.0f) {
                const float f = sru_sigmoid(uf + b_f + v_f * c_prev);
                const float rr = sru_sigmoid(ur + b_r + v_r * c_prev);
                const float cc = f * (c_prev - z) + z;
                const float g = activation ? tanhf(cc) : cc;
                const float xs = scale_x * xv;
                h[o] = rr * (g - xs) + xs;
                c[o] = cc;
                c_prev = cc;
            } else {  // padded: c carries over, h is 0
                h[o] = 0.0f;
                c[o] = c_prev;
            }
        }
    }
}

// Gradients of the recurrence. Inputs as sru_fwd plus c (the forward's c), dh and dc (L, B, R, D; null =
// zeros). Outputs (each null = not wanted, each with its accumulate flag):
//   du         (L, B, R, K, D)  (du[..., 3, :] = d x' when K == 4)
//   dxs        (L, B, R, D)     d x per direction (K == 3 only; for R == 1 this is dx itself)
//   dbias_part (B, R, 2, D)     per-batch-row partial sums (for B == 1 this is dbias itself)
//   dwc_part   (B, R, 2, D)     per-batch-row partial sums of the v gradients (computed even when wc is null)
//   dc0        (B, R, D)
// Padded steps produce no gradient (du = 0, dxs = 0) and pass the running dc through unchanged.
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)
sru_bwd(const float* __restrict__ u, const float* __restrict__ x, const float* __restrict__ bias,
        const float* __restrict__ wc, const float* __restrict__ c0, const float* __restrict__ mask,
        const float* __restrict__ c, const float* __restrict__ dh, const float* __restrict__ dc,
        float* __restrict__ du, float* __restrict__ dxs, float* __restrict__ dbias_part,
        float* __restrict__ dwc_part, float* __restrict__ dc0,
        const int L, const int B, const int R, const int K, const int D,
        const int activation, const float scale_x,
        const int accum_du, const int accum_dxs, const int accum_dbias, const int accum_dwc,
        const int accum_dc0)
{
    const long long cols = (long long)B * R * D;
    const long long u_step = cols * K;
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    for (long long col = (long long)blockIdx.x * blockDim.x + threadIdx.x; col < cols; col += grid_stride) {
        const SruColumn q = sru_column(col, u, x, bias, wc, B, R, K, D);
        const int d = q.d, r = q.r, b = q.b;
        const long long br = q.br;
        const float b_f = q.b_f, b_r = q.b_r, v_f = q.v_f, v_r = q.v_r;
        const float* up = q.up;
        const float* xp = q.xp;
        const long long x_step = q.x_step;
        const float c_init = c0 ? c0[col] : 0.0f;
        float* dup = du ? du + br * K * D + d : 0;
        const int dt = (r == 0) ? -1 : 1;    // against the forward walk
        int t = (r == 0) ? L - 1 : 0;        // the forward walk's last step

        // The reads of the next two steps (s1, g1: step i + 1 of this walk; s2, g2: step i + 2). The walk's
        // step i is at time t0 + i*dt; the forward walk's step before it is at time t0 + (i+1)*dt, or c0
        // for the walk's last step.
        const SruStep none = {0.0f, 0.0f, 0.0f, 0.0f, 1.0f};
        const SruGradStep none_g = {0.0f, 0.0f, 0.0f};
        SruStep s1 = none, s2 = none;
        SruGradStep g1 = none_g, g2 = none_g;
        float c_cur = 0.0f;  // c at the current step
        if (L > 0) {
            const long long o = t * cols + col;
            c_cur = c[o];
            s1 = sru_load(up, xp, mask, t, u_step, x_step, D, B, b);
            g1 = sru_load_grad(dh, dc, c, o, (L > 1) ? o + dt * cols : -1, c_init);
        }
        if (L > 1) {
            const long long o = (long long)(t + dt) * cols + col;
            s2 = sru_load(up, xp, mask, t + dt, u_step, x_step, D, B, b);
            g2 = sru_load_grad(dh, dc, c, o, (L > 2) ? o + dt * cols : -1, c_init);
        }
        float dcur = 0.0f, s_bf = 0.0f, s_br = 0.0f, s_vf = 0.0f, s_vr = 0.0f;
        for (int i = 0; i < L; ++i, t += dt) {
            const SruStep s = s1;
            const SruGradStep gs = g1;
            s1 = s2;
            g1 = g2;
            if (i + 2 < L) {
                const long long tn = t + 2 * dt;
                const long long on = tn * cols + col;
                s2 = sru_load(up, xp, mask, tn, u_step, x_step, D, B, b);
                g2 = sru_load_grad(dh, dc, c, on, (i + 3 < L) ? on + dt * cols : -1, c_init);
            }
            const float z = s.z, uf = s.f, ur = s.r, xv = s.x, m = s.m, dhv = gs.dh, dcv = gs.dc;
            const float cp = gs.cp;
            const long long o = t * cols + col;
            dcur += dcv;
            if (m != 0.0f) {
                const float f = sru_sigmoid(uf + b_f + v_f * cp);
                const float rr = sru_sigmoid(ur + b_r + v_r * cp);
                const float g = activation ? tanhf(c_cur) : c_cur;
                const float dg = activation ? 1.0f - g * g : 1.0f;
                const float xs = scale_x * xv;
                const float dct = dcur + dhv * rr * dg;
                const float d_r = dhv * (g - xs) * rr * (1.0f - rr);
                const float d_xs = dhv * (1.0f - rr) * scale_x;
                const float d_f = dct * (cp - z) * f * (1.0f - f);
                const float d_z = dct * (1.0f - f);
                dcur = dct * f + d_f * v_f + d_r * v_r;
                s_bf += d_f;
                s_br += d_r;
                s_vf += d_f * cp;
                s_vr += d_r * cp;
                if (dup) {
                    float* p = dup + t * u_step;
                    sru_store(p, d_z, accum_du);
                    sru_store(p + D, d_f, accum_du);
                    sru_store(p + 2 * D, d_r, accum_du);
                    if (K == 4) sru_store(p + 3 * D, d_xs, accum_du);
                }
                if (K == 3 && dxs) sru_store(dxs + o, d_xs, accum_dxs);
            } else {  // padded: no gradient here, dcur passes through
                if (dup && !accum_du) {
                    float* p = dup + t * u_step;
                    for (int j = 0; j < K; ++j) p[j * D] = 0.0f;
                }
                if (K == 3 && dxs && !accum_dxs) dxs[o] = 0.0f;
            }
            c_cur = cp;
        }
        if (dc0) sru_store(dc0 + col, dcur, accum_dc0);
        const long long pb = br * 2 * D + d;  // (B, R, 2, D): ((b * R + r) * 2 + j) * D + d
        if (dbias_part) {
            sru_store(dbias_part + pb, s_bf, accum_dbias);
            sru_store(dbias_part + pb + D, s_br, accum_dbias);
        }
        if (dwc_part) {
            sru_store(dwc_part + pb, s_vf, accum_dwc);
            sru_store(dwc_part + pb + D, s_vr, accum_dwc);
        }
    }
}

// out[i] (accum ? += : =) sum over b of part[b, i], b in order 0..B-1 (deterministic, no atomics).
// part (B, n), out (n,): the per-batch-row dbias / dwc partials reduced to (R, 2, D) with n = R * 2 * D.
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)
sru_reduce_batch(const float* __restrict__ part, float* __restrict__ out, const int B, const int n,
                 const int accum)
{
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += grid_stride) {
        float s = 0.0f;
        for (int b = 0; b < B; ++b) s += part[(long long)b * n + i];
        sru_store(out + i, s, accum);
    }
}

// dx[row, d] (accum ? += : =) sum over r of dxs[row, r, d], r in order; dxs (rows, R, D), dx (rows, D),
// rows = L * B. With R == 0 (dxs unused) it writes zeros: the x gradient when K == 4 (x is not read).
extern "C" __global__ void __launch_bounds__(SRU_BLOCK)
sru_sum_dirs(const float* __restrict__ dxs, float* __restrict__ dx, const int rows, const int R, const int D,
             const int accum)
{
    const long long n = (long long)rows * D;
    const long long grid_stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += grid_stride) {
        const long long row = i / D;
        const int d = (int)(i % D);
        float s = 0.0f;
        for (int r = 0; r < R; ++r) s += dxs[(row * R + r) * D + d];
        sru_store(dx + i, s, accum);
    }
}
